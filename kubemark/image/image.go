// Package image builds the hollow-node container image from a static
// kubemark binary, without Docker: one layer holding /kubemark and the
// writable folders the morphs use, an OCI manifest and config made with
// go-containerregistry, written as an OCI archive (what `ctr images import`
// and skopeo's oci-archive: read) or pushed to a registry.
//
// The image runs as a non-root user (NonRootUser) by default: the fleet
// layout needs nothing more. The kubelet layout's pods ask for root and
// privilege in their own securityContext, as upstream kubemark's do. With no
// arguments the image's command is `kubemark --morph=pause`, so the same
// image serves as a root node's pod sandbox where no pause image can be
// pulled.
package image

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kscale/kscale/kubemark/stamp"
)

// Where things are in the image.
const (
	// BinaryPath is kubemark's path, the provider's default --kubemark-command.
	BinaryPath = "/kubemark"
	// NonRootUser is the image's default user and group (distroless' nonroot).
	NonRootUser = 65532
	// DefaultRepository is the repository of a locally built image.
	DefaultRepository = "kscale.local/kubemark"
)

// OCI annotations and labels the image carries.
const (
	LabelRevision   = "org.opencontainers.image.revision"
	LabelVersion    = "org.opencontainers.image.version"
	LabelTitle      = "org.opencontainers.image.title"
	LabelKubernetes = "io.kscale.kubernetes-version"
	// AnnotationRefName names an image in an OCI layout (skopeo, ctr).
	AnnotationRefName = "org.opencontainers.image.ref.name"
	// AnnotationContainerdName is the name `ctr images import` gives it.
	AnnotationContainerdName = "io.containerd.image.name"
)

// writable are the folders a morph writes to, made writable for any user:
// the kubelet morph's private folders go under $TMPDIR.
var writable = []string{"/tmp", "/var/lib/kubelet", "/var/log"}

// etcFiles name the image's users: the kubelet reads /etc/passwd for its
// user-namespace mappings and fails to start without it.
var etcFiles = []struct{ path, text string }{
	{"/etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
	{"/etc/group", "root:x:0:\nnonroot:x:65532:\n"},
}

// Config is what an image is built from.
type Config struct {
	// Binary is a statically linked kubemark.
	Binary string
	// Reference names the image (repository:tag); empty means
	// DefaultRepository tagged with the binary's Kubernetes version.
	Reference string
}

// Image is a hollow-node image built from a binary.
type Image struct {
	ref        name.Reference
	kubernetes string
	revision   string
	img        v1.Image
}

// New checks the binary (an ELF executable with no dynamic loader or
// shared libraries, carrying Go build info) and builds the image in memory.
func New(c Config) (*Image, error) {
	if c.Binary == "" {
		return nil, errors.New("no kubemark binary given")
	}
	if err := checkStatic(c.Binary); err != nil {
		return nil, err
	}
	info, err := buildinfo.ReadFile(c.Binary)
	if err != nil {
		return nil, fmt.Errorf("%s: reading its Go build info: %w", c.Binary, err)
	}
	k8s, ok := stamp.KubernetesVersion(info)
	if !ok {
		return nil, fmt.Errorf("%s: does not link %s: not a kubemark binary", c.Binary, stamp.KubernetesModule)
	}
	refText := c.Reference
	if refText == "" {
		refText = DefaultRepository + ":" + k8s
	}
	ref, err := name.ParseReference(refText, name.WeakValidation)
	if err != nil {
		return nil, fmt.Errorf("image reference %q: %w", refText, err)
	}
	if _, isTag := ref.(name.Tag); !isTag {
		return nil, fmt.Errorf("image reference %q: a built image is named by a tag, not a digest", refText)
	}
	im := &Image{ref: ref, kubernetes: k8s, revision: stamp.Revision(info)}
	created := time.Unix(0, 0).UTC()
	for _, s := range info.Settings {
		if s.Key == "vcs.time" {
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				created = t
			}
		}
	}
	if im.img, err = im.build(c.Binary, created); err != nil {
		return nil, fmt.Errorf("building the image of %s: %w", c.Binary, err)
	}
	return im, nil
}

// Reference is the image's name.
func (im *Image) Reference() string { return im.ref.Name() }

// KubernetesVersion is the Kubernetes version the binary links.
func (im *Image) KubernetesVersion() string { return im.kubernetes }

// Revision is the commit the binary was built from ("" when unknown).
func (im *Image) Revision() string { return im.revision }

// Digest is the manifest digest.
func (im *Image) Digest() (string, error) {
	d, err := im.img.Digest()
	return d.String(), err
}

// V1 is the go-containerregistry image.
func (im *Image) V1() v1.Image { return im.img }

func (im *Image) build(binary string, created time.Time) (v1.Image, error) {
	layerTar, err := layerTar(binary, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: created}, CreatedBy: "kscale kubemark image", Comment: "kubemark " + im.kubernetes,
	}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Created = v1.Time{Time: created}
	labels := map[string]string{
		LabelTitle:      "kubemark",
		LabelVersion:    im.kubernetes,
		LabelKubernetes: im.kubernetes,
	}
	if im.revision != "" {
		labels[LabelRevision] = im.revision
	}
	cf.Config = v1.Config{
		Entrypoint: []string{BinaryPath},
		Cmd:        []string{"--morph=pause"},
		User:       fmt.Sprintf("%d:%d", NonRootUser, NonRootUser),
		WorkingDir: "/",
		Env:        []string{"PATH=/", "TMPDIR=/tmp"},
		Labels:     labels,
	}
	return mutate.ConfigFile(img, cf)
}

// layerTar is the image's only layer: the folders, then the binary.
func layerTar(binary string, created time.Time) ([]byte, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	var addDir func(dir string, mode int64) error
	addDir = func(dir string, mode int64) error {
		if dir == "/" || dirs[dir] {
			return nil
		}
		if err := addDir(filepath.Dir(dir), 0o755); err != nil {
			return err
		}
		dirs[dir] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir[1:] + "/", Mode: mode, ModTime: created, Format: tar.FormatPAX})
	}
	for _, d := range writable {
		if err := addDir(d, 0o1777); err != nil {
			return nil, err
		}
	}
	addFile := func(path string, mode int64, data []byte) error {
		if err := addDir(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: path[1:], Mode: mode, Size: int64(len(data)), ModTime: created, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, f := range etcFiles {
		if err := addFile(f.path, 0o644, []byte(f.text)); err != nil {
			return nil, err
		}
	}
	if err := addFile(BinaryPath, 0o755, data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkStatic refuses a binary that needs a dynamic loader or shared
// libraries: the image has neither.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (it asks for a program interpreter); the image has no libc: build it with CGO_ENABLED=0 (make build does)", path)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return fmt.Errorf("%s needs shared libraries %v; the image has none: build it with CGO_ENABLED=0 (make build does)", path, libs)
	}
	return nil
}

// WriteArchive writes the image as an OCI archive: a tar of an OCI image
// layout whose index names the image by its reference, for `ctr -n k8s.io
// images import FILE` and skopeo's oci-archive:FILE. The file is written
// whole or not at all.
func (im *Image) WriteArchive(path string) error {
	scratch, err := os.MkdirTemp("", "kscale-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	p, err := layout.Write(scratch, empty.Index)
	if err != nil {
		return fmt.Errorf("writing the OCI layout: %w", err)
	}
	annotations := map[string]string{AnnotationRefName: im.ref.Name(), AnnotationContainerdName: im.ref.Name()}
	if err := p.AppendImage(im.img, layout.WithAnnotations(annotations)); err != nil {
		return fmt.Errorf("writing the OCI layout: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubemark-image-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tarFolder(tmp, scratch); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// tarFolder writes the files under dir to w, with paths relative to dir.
func tarFolder(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if fi.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// Push writes the image to the registry of its reference, with the
// credentials of the default keychain (~/.docker/config.json).
func (im *Image) Push(ctx context.Context) error {
	if err := remote.Write(im.ref, im.img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("pushing %s: %w", im.ref.Name(), err)
	}
	return nil
}

// ArchiveReferences are the image names an OCI archive's index gives its
// images, as WriteArchive writes them.
func ArchiveReferences(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no index.json: not an OCI archive", path)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if hdr.Name != "index.json" && hdr.Name != "./index.json" {
			continue
		}
		idx, err := v1.ParseIndexManifest(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: index.json: %w", path, err)
		}
		var refs []string
		for _, m := range idx.Manifests {
			if ref := m.Annotations[AnnotationContainerdName]; ref != "" {
				refs = append(refs, ref)
			} else if ref := m.Annotations[AnnotationRefName]; ref != "" {
				refs = append(refs, ref)
			}
		}
		if len(refs) == 0 {
			return nil, fmt.Errorf("%s: its index names no image", path)
		}
		return refs, nil
	}
}
