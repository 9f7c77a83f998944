//go:build race

package server_test

// raceBuild: the race detector's shadow memory is part of every process's
// resident memory, several times the heap and varying with how soon the
// collector runs, so a bound on a process's memory says little under it.
const raceBuild = true
