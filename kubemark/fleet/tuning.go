package fleet

import (
	"os"
	"runtime"
	"runtime/debug"
)

// nodesPerProc is how many hollow nodes one Go P serves. At 5000 kubelet
// nodes the fleet needs ~0.3 core at idle; what it does is many small API
// calls, each a goroutine waking another, and a second P mostly adds thread
// wake-ups and scheduler spinning between them (here: 0.34 core with two
// Ps, 0.28 with one, a third of the difference in system time).
const nodesPerProc = 5000

// tuneRuntime sets the Go runtime for a fleet of nodes; GOGC and GOMAXPROCS
// in the environment win.
func tuneRuntime(nodes int) {
	// A fleet's heap is mostly small long-lived objects (connections,
	// streams, node state); collecting at 50 % growth instead of 100 % keeps
	// its memory well down for a few percent more CPU.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(procsFor(nodes, runtime.GOMAXPROCS(0)))
	}
}

// procsFor returns the Ps for a fleet of nodes: one per nodesPerProc
// started, at most available (what the runtime chose for the machine or
// container).
func procsFor(nodes, available int) int {
	return max(1, min(available, (nodes+nodesPerProc-1)/nodesPerProc))
}
