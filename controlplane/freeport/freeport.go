package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

const (
	// lowestPort is the bottom of the range picked from: above the ports
	// well-known services and most developers' servers use.
	lowestPort = 10000
	// defaultEphemeralStart is Linux's default start of the ephemeral range.
	defaultEphemeralStart = 32768
	// minRange is the least room below the ephemeral range worth picking
	// from; with less, the kernel's own choice is used.
	minRange = 1000
	attempts = 50
)

// rangeFile holds the kernel's ephemeral port range ("32768\t60999").
var rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// Listen returns a listener on 127.0.0.1 on a free port below the kernel's
// ephemeral range (or on one the kernel picks when that range leaves too
// little room below it).
func Listen() (net.Listener, error) {
	lo, hi, ok := pickRange(readRangeFile())
	if ok {
		for range attempts {
			port := lo + rand.IntN(hi-lo)
			if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
				return l, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
	}
	return l, nil
}

// Pick returns a port of 127.0.0.1 that was free a moment ago, for a child
// process to bind.
func Pick() (int, error) {
	l, err := Listen()
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func readRangeFile() string {
	data, err := os.ReadFile(rangeFile)
	if err != nil {
		return ""
	}
	return string(data)
}

// pickRange returns the ports [lo, hi) to pick from given the contents of
// the kernel's ephemeral range file; ok is false when there is too little
// room below the ephemeral range.
func pickRange(ephemeral string) (lo, hi int, ok bool) {
	start := defaultEphemeralStart
	if fields := strings.Fields(ephemeral); len(fields) == 2 {
		if n, err := strconv.Atoi(fields[0]); err == nil && n > 0 {
			start = n
		}
	}
	if start-lowestPort < minRange {
		return 0, 0, false
	}
	return lowestPort, start, true
}
