package morph

import (
	"fmt"

	versionutil "k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/version"
	"k8s.io/component-helpers/nodedeclaredfeatures"
	"k8s.io/kubernetes/pkg/kubelet"
)

// KubeletDeclaredFeatures returns the features a kubelet of this binary
// declares in its Node's status.declaredFeatures, found by the kubelet's own
// discovery with its feature gates and a runtime that reports no optional
// features, as the fake runtime does. The fleet declares the same: the
// scheduler's NodeDeclaredFeatures filter and the apiserver's admission of
// pod updates check pods against this list, so a node without it refuses
// pods a real node takes.
func KubeletDeclaredFeatures() ([]string, error) {
	v, err := versionutil.Parse(version.Get().String())
	if err != nil {
		return nil, fmt.Errorf("parsing the kubelet version: %w", err)
	}
	return nodedeclaredfeatures.DefaultFramework.DiscoverNodeFeatures(&nodedeclaredfeatures.NodeConfiguration{
		FeatureGates: kubelet.FeatureGateAdapter{FeatureGate: utilfeature.DefaultFeatureGate},
		Version:      v,
	}), nil
}
