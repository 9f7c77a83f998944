// Package faults runs osb against servers that misbehave on purpose and
// checks that each failure ends in one clear message, the documented exit
// code, and nothing left half done on disk or on the server. The package has
// no code outside its tests.
package faults
