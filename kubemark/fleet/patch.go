package fleet

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/types"
)

// statusPatch renders a strategic-merge patch of an object's status. A
// non-empty uid is added as metadata.uid, which the apiserver checks as a
// precondition — the kubelet guards every pod status patch that way, so a
// patch never lands on a new pod that reuses the name.
func statusPatch(status map[string]any, uid types.UID) ([]byte, error) {
	patch := map[string]any{"status": status}
	if uid != "" {
		patch["metadata"] = map[string]any{"uid": uid}
	}
	return json.Marshal(patch)
}
