// Package stamp gives a binary the Kubernetes version it was built from
// however it was built. `make build` stamps the version with linker flags;
// a plain `go build` or `go install` leaves Kubernetes' placeholder
// (v0.0.0-master+$Format:%H$), which hollow nodes would report as their
// kubelet version. Importing this package fills the placeholder in from the
// module build info: the version of k8s.io/kubernetes the binary links.
package stamp

import (
	"fmt"
	"runtime/debug"
	"strings"
	_ "unsafe" // go:linkname

	cgversion "k8s.io/client-go/pkg/version"
	"k8s.io/component-base/version"
)

// Placeholder is the version Kubernetes' packages carry without linker flags.
const Placeholder = "v0.0.0-master+$Format:%H$"

// KubernetesModule is the module whose version the binary reports.
const KubernetesModule = "k8s.io/kubernetes"

// The version variables of component-base and client-go, which the linker
// sets under `make build` and which nothing exports for writing.

//go:linkname cbGitVersion k8s.io/component-base/version.gitVersion
var cbGitVersion string

//go:linkname cbGitMajor k8s.io/component-base/version.gitMajor
var cbGitMajor string

//go:linkname cbGitMinor k8s.io/component-base/version.gitMinor
var cbGitMinor string

//go:linkname cbBuildDate k8s.io/component-base/version.buildDate
var cbBuildDate string

//go:linkname cgGitVersion k8s.io/client-go/pkg/version.gitVersion
var cgGitVersion string

//go:linkname cgGitMajor k8s.io/client-go/pkg/version.gitMajor
var cgGitMajor string

//go:linkname cgGitMinor k8s.io/client-go/pkg/version.gitMinor
var cgGitMinor string

//go:linkname cgBuildDate k8s.io/client-go/pkg/version.buildDate
var cgBuildDate string

func init() {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	apply(info)
}

// apply fills in the placeholder versions from info; versions the linker
// set are left as they are.
func apply(info *debug.BuildInfo) {
	v, ok := KubernetesVersion(info)
	if !ok {
		return
	}
	major, minor, _ := majorMinor(v)
	date := setting(info, "vcs.time")
	if cbGitVersion == Placeholder {
		cbGitVersion, cbGitMajor, cbGitMinor = v, major, minor
		if cbBuildDate == "1970-01-01T00:00:00Z" && date != "" {
			cbBuildDate = date
		}
		// component-base reads its version from a copy made at its init;
		// it checks the new one against gitVersion, set just above.
		_ = version.SetDynamicVersion(v)
	}
	if cgGitVersion == Placeholder {
		cgGitVersion, cgGitMajor, cgGitMinor = v, major, minor
		if cgBuildDate == "1970-01-01T00:00:00Z" && date != "" {
			cgBuildDate = date
		}
	}
}

// KubernetesVersion is the version of k8s.io/kubernetes in the build info
// (its replacement's, when go.mod replaces it). A binary that links only
// the staging modules reports theirs as Kubernetes numbers them: staging
// v0.37.2 is Kubernetes v1.37.2.
func KubernetesVersion(info *debug.BuildInfo) (string, bool) {
	if v, ok := moduleVersion(info, KubernetesModule); ok {
		return v, true
	}
	if v, ok := moduleVersion(info, "k8s.io/component-base"); ok && strings.HasPrefix(v, "v0.") {
		return "v1." + strings.TrimPrefix(v, "v0."), true
	}
	return "", false
}

func moduleVersion(info *debug.BuildInfo, path string) (string, bool) {
	for _, d := range info.Deps {
		if d.Path != path {
			continue
		}
		v := d.Version
		if d.Replace != nil {
			v = d.Replace.Version
		}
		return v, strings.HasPrefix(v, "v") && !strings.HasPrefix(v, "v0.0.0")
	}
	return "", false
}

// Revision is the VCS commit the binary was built from, with "-dirty" when
// the tree had changes; empty when the build recorded none.
func Revision(info *debug.BuildInfo) string {
	rev := setting(info, "vcs.revision")
	if rev != "" && setting(info, "vcs.modified") == "true" {
		rev += "-dirty"
	}
	return rev
}

func setting(info *debug.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// majorMinor splits v1.37.2 into "1" and "37".
func majorMinor(v string) (string, string, error) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return "", "", fmt.Errorf("version %q is not vMAJOR.MINOR.PATCH", v)
	}
	return parts[0], parts[1], nil
}

// Version is the Kubernetes version this binary reports.
func Version() string { return version.Get().GitVersion }

// ClientVersion is client-go's idea of it (the User-Agent's version).
func ClientVersion() string { return cgversion.Get().GitVersion }
