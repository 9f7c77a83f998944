// Package testnet holds what tests need of the host's network.
package testnet

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// lowest is the lowest port FreePort hands out: below it are the ports of
// well-known services.
const lowest = 10000

// FreePort returns a loopback TCP port that nothing listens on, for a
// process the test starts to listen on, or for a test that wants a closed
// port. It lies below the kernel's ephemeral range, from which listeners
// on port 0 and outgoing connections take theirs: a port taken from that
// range and closed again can go to a parallel test's server before the
// test's process binds it.
func FreePort(t testing.TB) int {
	t.Helper()
	top := ephemeralStart()
	for range 100 {
		port := lowest + rand.IntN(top-lowest)
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			ln.Close()
			return port
		}
	}
	t.Fatalf("no free loopback port between %d and %d", lowest, top)
	return 0
}

// ephemeralStart is the first port of the kernel's ephemeral range: Linux
// says it, and 32768 is where the smallest of the usual ranges starts.
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 32768
	}
	start, err := strconv.Atoi(fields[0])
	if err != nil || start <= lowest+1000 {
		return 32768
	}
	return start
}
