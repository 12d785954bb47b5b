package local

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/kscale/kscale/framework/provider/local/localtest"
)

// The integration tests of this package share one local cluster with three
// hollow kubelet nodes, started on first use and stopped after the last test:
// bringing up a control plane costs seconds and CPU that a 2-core CI machine
// should spend once.
var (
	sharedOnce  sync.Once
	shared      *ControlPlane
	sharedNodes *NodeGroup
	sharedErr   error
	sharedRoot  string
	// cleanups run after the last test, before the shared cluster stops.
	cleanups []func() error
)

const sharedNodeCount = 3

func TestMain(m *testing.M) {
	klog.InitFlags(nil)
	flag.Parse()
	code := m.Run()
	for _, cleanup := range cleanups {
		if err := cleanup(); err != nil {
			fmt.Fprintf(os.Stderr, "cleanup: %v\n", err)
			code = 1
		}
	}
	if shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if sharedNodes != nil {
			if err := sharedNodes.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "hollow nodes of the shared cluster: %v\n", err)
				code = 1
			}
		}
		if err := shared.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the shared cluster: %v\n", err)
			code = 1
		}
		cancel()
	}
	if sharedRoot != "" && code == 0 {
		os.RemoveAll(sharedRoot)
	}
	os.Exit(code)
}

// sharedCluster returns the package's cluster with sharedNodeCount Ready
// hollow kubelet nodes.
func sharedCluster(t testing.TB) (*ControlPlane, *NodeGroup) {
	t.Helper()
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		sharedRoot, sharedErr = os.MkdirTemp("", "kscale-it-")
		if sharedErr != nil {
			return
		}
		shared, sharedErr = Start(ctx, filepath.Join(sharedRoot, "cluster"), localtest.Options(), os.Stderr)
		if sharedErr != nil {
			return
		}
		sharedNodes, sharedErr = shared.StartNodes(ctx, sharedNodeCount, NodeOptions{Group: "shared"})
		if sharedErr != nil {
			return
		}
		waitCtx, stop := UntilExit(ctx, sharedNodes.Processes...)
		defer stop()
		sharedErr = WaitNodesReady(waitCtx, shared.Client, HollowLabel+"=shared", sharedNodeCount, os.Stderr)
	})
	if sharedErr != nil {
		t.Fatalf("shared cluster: %v (folder %s kept for its logs)", sharedErr, sharedRoot)
	}
	return shared, sharedNodes
}
