package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPickRange(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		lo, hi     int
		ok         bool
	}{
		{"linux default", "32768\t60999\n", 10000, 32768, true},
		{"wider ephemeral range", "15000 65000", 10000, 15000, true},
		{"no room below", "1024\t65535", 0, 0, false},
		{"just too little room", "10999 60999", 0, 0, false},
		{"unreadable: linux default assumed", "", 10000, 32768, true},
		{"garbage: linux default assumed", "many ports", 10000, 32768, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, ok := pickRange(tc.file)
			if lo != tc.lo || hi != tc.hi || ok != tc.ok {
				t.Errorf("pickRange(%q) = %d, %d, %v; want %d, %d, %v", tc.file, lo, hi, ok, tc.lo, tc.hi, tc.ok)
			}
		})
	}
}

// TestPickIsBelowTheEphemeralRange: on this machine's kernel the port comes
// from below its ephemeral range and can be bound again once released.
func TestPickIsBelowTheEphemeralRange(t *testing.T) {
	_, hi, ok := pickRange(readRangeFile())
	if !ok {
		t.Fatalf("this machine's ephemeral range %q leaves no room below it", readRangeFile())
	}
	seen := map[int]bool{}
	for range 20 {
		port, err := Pick()
		if err != nil {
			t.Fatal(err)
		}
		if port < lowestPort || port >= hi {
			t.Fatalf("port %d, want in [%d, %d)", port, lowestPort, hi)
		}
		seen[port] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("binding the picked port again: %v", err)
		}
		l.Close()
	}
	if len(seen) < 2 {
		t.Errorf("20 picks gave %d distinct ports", len(seen))
	}
}

// TestListenHoldsThePort: the listener it returns holds its port, so two
// held listeners never share one.
func TestListenHoldsThePort(t *testing.T) {
	a, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := net.Listen("tcp", a.Addr().String()); err == nil {
		t.Fatalf("%s could be bound twice", a.Addr())
	}
}
