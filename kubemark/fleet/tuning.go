package fleet

import (
	"context"
	"k8s.io/utils/clock"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"k8s.io/klog/v2"
)

// nodesPerProc is how many hollow nodes one Go P serves. An idle fleet
// needs well under a core; what it does is many small API calls, each a
// goroutine waking another, and a second P mostly adds thread wake-ups and
// scheduler spinning between them, more CPU for no more work.
const nodesPerProc = 5000

// tuneRuntime sets the Go runtime for a fleet of nodes; GOGC and GOMAXPROCS
// in the environment win.
func tuneRuntime(nodes int) {
	// A fleet's heap is mostly small long-lived objects (connections,
	// streams, node state) and it allocates little once started, so the
	// heap it keeps is mostly the room Go leaves to grow before the next
	// collection: a low GOGC trades a little CPU at idle for less memory.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
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

// startupCheckInterval is how often the fleet checks whether its start-up is over.
const startupCheckInterval = 5 * time.Second

// releaseFreeHeap hands the heap Go holds free back to the OS.
func releaseFreeHeap() {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	klog.V(2).InfoS("Start-up over; returned the heap it left free to the OS",
		"releasedMiB", (int64(after.HeapReleased)-int64(before.HeapReleased))>>20)
}

// afterStartup calls release once, when over() has held for two checks in a
// row, every apart. The fleet releases its free heap then: registering
// thousands of nodes at once (a key, a certificate and a TLS handshake each,
// then six watch-lists) peaks well above what it keeps afterwards, and Go's
// background scavenger only returns memory above about the next GC goal,
// so the rest would stay resident for as long as the fleet runs.
func afterStartup(ctx context.Context, clk clock.WithTicker, every time.Duration, over func() bool, release func()) {
	ticker := clk.NewTicker(every)
	defer ticker.Stop()
	held := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
		if !over() {
			held = 0
			continue
		}
		if held++; held == 2 {
			release()
			return
		}
	}
}
