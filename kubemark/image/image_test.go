package image_test

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kscale/kscale/kubemark/image"
)

var built struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" {
		os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}

// kubemarkBinary is $KSCALE_BIN_DIR/kubemark (make sets it) or, without it,
// kubemark built statically once for the test binary.
func kubemarkBinary(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("KSCALE_BIN_DIR"); dir != "" {
		return filepath.Join(dir, "kubemark")
	}
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "kscale-image-test-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "kubemark")
		cmd := exec.Command("go", "build", "-o", built.path, "github.com/kscale/kscale/cmd/kubemark")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build kubemark: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// TestArchive builds the image of bin/kubemark, writes the OCI archive and
// reads it back as skopeo and ctr would: an OCI layout whose index names the
// image, one layer with the binary and the writable folders, a non-root
// user, the version labels.
func TestArchive(t *testing.T) {
	bin := kubemarkBinary(t)
	im, err := image.New(image.Config{Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(im.KubernetesVersion(), "v1.") {
		t.Fatalf("Kubernetes version %q", im.KubernetesVersion())
	}
	if want := image.DefaultRepository + ":" + im.KubernetesVersion(); im.Reference() != want {
		t.Fatalf("reference %s, want %s", im.Reference(), want)
	}
	archive := filepath.Join(t.TempDir(), "kubemark.tar")
	if err := im.WriteArchive(archive); err != nil {
		t.Fatal(err)
	}
	refs, err := image.ArchiveReferences(archive)
	if err != nil || len(refs) != 1 || refs[0] != im.Reference() {
		t.Fatalf("ArchiveReferences = %v, %v; want [%s]", refs, err, im.Reference())
	}
	dir := untar(t, archive)
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("the archive is not an OCI layout: %v", err)
	}
	man, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Manifests) != 1 {
		t.Fatalf("%d manifests in the index, want 1", len(man.Manifests))
	}
	desc := man.Manifests[0]
	for _, k := range []string{image.AnnotationRefName, image.AnnotationContainerdName} {
		if desc.Annotations[k] != im.Reference() {
			t.Errorf("annotation %s = %q, want %s", k, desc.Annotations[k], im.Reference())
		}
	}
	want, _ := im.Digest()
	if desc.Digest.String() != want {
		t.Fatalf("index names %s, image is %s", desc.Digest, want)
	}
	img, err := idx.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want the non-root 65532:65532", cf.Config.User)
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != image.BinaryPath {
		t.Errorf("entrypoint %q", got)
	}
	if cf.Config.Labels[image.LabelKubernetes] != im.KubernetesVersion() || cf.Config.Labels[image.LabelVersion] != im.KubernetesVersion() {
		t.Errorf("labels %v lack the Kubernetes version %s", cf.Config.Labels, im.KubernetesVersion())
	}
	if rev := im.Revision(); rev != "" && cf.Config.Labels[image.LabelRevision] != rev {
		t.Errorf("revision label %q, want %q", cf.Config.Labels[image.LabelRevision], rev)
	}
	files := layerFiles(t, img)
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := files["kubemark"]; !ok || f.size != int64(len(data)) || f.mode&0o111 == 0 {
		t.Errorf("kubemark in the layer: %+v, want an executable of %d bytes", f, len(data))
	}
	for _, f := range []string{"etc/passwd", "etc/group"} {
		if _, ok := files[f]; !ok {
			t.Errorf("no %s in the layer: the kubelet morph reads it", f)
		}
	}
	for _, d := range []string{"tmp/", "var/lib/kubelet/", "var/log/"} {
		if f, ok := files[d]; !ok || f.mode&0o1777 != 0o1777 {
			t.Errorf("folder %s in the layer: %+v, want mode 1777 (writable by the non-root user)", d, f)
		}
	}
}

func TestRefusesADynamicBinary(t *testing.T) {
	for _, bin := range []string{"/bin/ls", "/bin/sh"} {
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		_, err := image.New(image.Config{Binary: bin})
		if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
			t.Fatalf("image of %s: err %v, want a refusal naming CGO_ENABLED=0", bin, err)
		}
		return
	}
	t.Fatal("no dynamically linked binary found to test with")
}

func TestRefusesBadInput(t *testing.T) {
	bin := kubemarkBinary(t)
	for _, c := range []image.Config{
		{},
		{Binary: filepath.Join(t.TempDir(), "missing")},
		{Binary: bin, Reference: "Not A Reference"},
		{Binary: bin, Reference: "example.com/kubemark@sha256:" + strings.Repeat("0", 64)},
	} {
		if _, err := image.New(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestPush pushes to an in-process registry and pulls the image back.
func TestPush(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ref := u.Host + "/scale/kubemark:test"
	im, err := image.New(image.Config{Binary: kubemarkBinary(t), Reference: ref})
	if err != nil {
		t.Fatal(err)
	}
	if err := im.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(parsed)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := pulled.Digest()
	want, _ := im.Digest()
	if got.String() != want {
		t.Fatalf("pulled %s, pushed %s", got, want)
	}
}

func untar(t *testing.T, archive string) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		out.Close()
	}
}

type layerFile struct {
	size int64
	mode int64
}

func layerFiles(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]layerFile{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[hdr.Name] = layerFile{size: hdr.Size, mode: hdr.Mode}
	}
}
