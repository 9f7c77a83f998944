package testnet

import (
	"net"
	"strconv"
	"testing"
)

// The port is one a process can listen on, outside the range the kernel
// hands out to port-0 listeners.
func TestFreePort(t *testing.T) {
	top := ephemeralStart()
	for range 20 {
		port := FreePort(t)
		if port < lowest || port >= top {
			t.Fatalf("FreePort = %d, want it in [%d, %d)", port, lowest, top)
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("listening on the free port: %v", err)
		}
		ln.Close()
	}
}
