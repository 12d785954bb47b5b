package morph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	noopoteltrace "go.opentelemetry.io/otel/trace/noop"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	v1core "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	internalapi "k8s.io/cri-api/pkg/apis"
	remote "k8s.io/cri-client/pkg"
	fakeremote "k8s.io/cri-client/pkg/fake"
	"k8s.io/klog/v2"
	kubeletapp "k8s.io/kubernetes/cmd/kubelet/app"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	"k8s.io/kubernetes/pkg/kubelet"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	cadvisortest "k8s.io/kubernetes/pkg/kubelet/cadvisor/testing"
	"k8s.io/kubernetes/pkg/kubelet/certificate/bootstrap"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	containertest "k8s.io/kubernetes/pkg/kubelet/container/testing"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	kubeletutil "k8s.io/kubernetes/pkg/kubelet/util"
	"k8s.io/kubernetes/pkg/util/oom"
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/configmap"
	"k8s.io/kubernetes/pkg/volume/csi"
	"k8s.io/kubernetes/pkg/volume/downwardapi"
	"k8s.io/kubernetes/pkg/volume/emptydir"
	"k8s.io/kubernetes/pkg/volume/fc"
	"k8s.io/kubernetes/pkg/volume/hostpath"
	"k8s.io/kubernetes/pkg/volume/iscsi"
	"k8s.io/kubernetes/pkg/volume/local"
	"k8s.io/kubernetes/pkg/volume/nfs"
	"k8s.io/kubernetes/pkg/volume/projected"
	"k8s.io/kubernetes/pkg/volume/secret"
	"k8s.io/kubernetes/pkg/volume/util/hostutil"
	"k8s.io/kubernetes/pkg/volume/util/subpath"
	"k8s.io/mount-utils"
)

// RunKubelet runs the real kubelet for one hollow node until ctx ends, then
// removes the node's private folder.
func RunKubelet(ctx context.Context, c *Config) error {
	root, cleanup, err := kubeletRootDir(c)
	if err != nil {
		return err
	}
	defer cleanup()
	klog.InfoS("Hollow kubelet starting", "node", c.NodeName, "rootDir", root)

	if c.BootstrapKubeconfigPath != "" {
		certDir := c.CertDirectory
		if certDir == "" {
			certDir = filepath.Join(root, "pki")
		}
		if err := bootstrap.LoadClientCert(ctx, c.KubeconfigPath, c.BootstrapKubeconfigPath, certDir, types.NodeName(c.NodeName)); err != nil {
			return fmt.Errorf("bootstrapping client certificate: %w", err)
		}
	}
	clientConfig, err := c.restConfig()
	if err != nil {
		return err
	}
	clientConfig.UserAgent = "hollow-kubelet"

	flags, kc := kubeletConfiguration(c, root)
	for _, d := range []string{kc.StaticPodPath, kc.PodLogsDir} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}

	client, err := clientset.NewForConfig(clientConfig)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	// A real kubelet heartbeats on an unthrottled client whose timeout is
	// the shorter of the lease duration and the status update period.
	heartbeatConfig := *clientConfig
	heartbeatConfig.QPS = -1
	heartbeatConfig.Timeout = min(kc.NodeStatusUpdateFrequency.Duration, time.Duration(kc.NodeLeaseDurationSeconds)*time.Second)
	heartbeatClient, err := clientset.NewForConfig(&heartbeatConfig)
	if err != nil {
		return fmt.Errorf("creating heartbeat client: %w", err)
	}

	runtimeEndpoint := "unix://" + filepath.Join(root, "cri.sock")
	fakeRuntime := fakeremote.NewFakeRemoteRuntime()
	if err := fakeRuntime.Start(runtimeEndpoint); err != nil {
		return fmt.Errorf("starting fake container runtime: %w", err)
	}
	defer fakeRuntime.Stop()
	runtimeService, err := remote.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(runtimeEndpoint).
		WithConnectionTimeout(15 * time.Second).
		Build(ctx)
	if err != nil {
		return fmt.Errorf("connecting to fake container runtime: %w", err)
	}
	var imageService internalapi.ImageManagerService = fakeRuntime.ImageService
	if c.UseHostImageService {
		imageService, err = remote.NewRemoteImageServiceBuilder().
			WithEndpoint(kc.ImageServiceEndpoint).
			WithConnectionTimeout(15 * time.Second).
			Build(ctx)
		if err != nil {
			return fmt.Errorf("connecting to host image service %s: %w", kc.ImageServiceEndpoint, err)
		}
	}

	var containerManager cm.ContainerManager = cm.NewStubContainerManager()
	if len(c.ExtendedResources) > 0 {
		extended := v1.ResourceList{}
		for name, q := range c.ExtendedResources {
			quantity, err := resource.ParseQuantity(q)
			if err != nil {
				return fmt.Errorf("--extended-resources %s=%s: %w", name, q, err)
			}
			extended[v1.ResourceName(name)] = quantity
		}
		containerManager = cm.NewStubContainerManagerWithDevicePluginResource(extended)
	}
	capacity := v1.ResourceList{v1.ResourceMemory: c.Memory, v1.ResourceEphemeralStorage: c.EphemeralStorage}
	reservation, err := evictionReservation(kc.EvictionHard, capacity)
	if err != nil {
		return err
	}
	containerManager = &hollowContainerManager{ContainerManager: containerManager, ephemeralStorage: c.EphemeralStorage, reservation: reservation}

	deps := &kubelet.Dependencies{
		KubeClient:                client,
		HeartbeatClient:           heartbeatClient,
		ProbeManager:              hollowProber{},
		RemoteRuntimeService:      runtimeService,
		RemoteImageService:        imageService,
		CAdvisorInterface:         &fakeMachine{Fake: cadvisortest.Fake{NodeName: c.NodeName}, cores: int(c.CPU.Value()), memory: uint64(c.Memory.Value())},
		OSInterface:               &containertest.FakeOS{},
		ContainerManager:          containerManager,
		VolumePlugins:             volumePlugins(),
		OOMAdjuster:               oom.NewFakeOOMAdjuster(),
		Mounter:                   &mount.FakeMounter{},
		Subpather:                 &subpath.FakeSubpath{},
		HostUtil:                  hostutil.NewFakeHostUtil(nil),
		PodStartupLatencyTracker:  kubeletutil.NewPodStartupLatencyTracker(),
		NodeStartupLatencyTracker: kubeletutil.NewNodeStartupLatencyTracker(klog.FromContext(ctx)),
		TracerProvider:            noopoteltrace.NewTracerProvider(),
	}
	if c.Events {
		// As a real kubelet: events on their own client, rate limited by
		// eventRecordQPS/eventBurst. RunKubelet builds the recorder.
		eventConfig := *clientConfig
		eventConfig.QPS = float32(kc.EventRecordQPS)
		eventConfig.Burst = int(kc.EventBurst)
		if deps.EventClient, err = v1core.NewForConfig(&eventConfig); err != nil {
			return fmt.Errorf("creating event client: %w", err)
		}
	} else {
		deps.Recorder = &record.FakeRecorder{}
	}

	if err := kubeletapp.RunKubelet(ctx, &options.KubeletServer{KubeletFlags: *flags, KubeletConfiguration: *kc}, deps); err != nil {
		return fmt.Errorf("running kubelet: %w", err)
	}
	<-ctx.Done()
	klog.InfoS("Hollow kubelet stopping", "node", c.NodeName)
	return nil
}

// kubeletRootDir returns the kubelet's root folder and a function that removes
// it if it was made here.
func kubeletRootDir(c *Config) (string, func(), error) {
	if c.RootDir != "" {
		if err := os.MkdirAll(c.RootDir, 0o750); err != nil {
			return "", nil, fmt.Errorf("creating --root-dir: %w", err)
		}
		return c.RootDir, func() {}, nil
	}
	// os.MkdirTemp honours $TMPDIR; the short prefix keeps the unix socket
	// paths inside under the 108-byte limit.
	root, err := os.MkdirTemp("", "hollow-kubelet-")
	if err != nil {
		return "", nil, fmt.Errorf("creating the kubelet's private folder: %w", err)
	}
	return root, func() {
		if err := os.RemoveAll(root); err != nil {
			klog.ErrorS(err, "Removing the kubelet's private folder", "path", root)
		}
	}, nil
}

// kubeletConfiguration is the configuration of a hollow kubelet: the real
// kubelet's defaults, with the periods kubemark uses (status every 10 s,
// reported at least every 5 min, lease renewed every 10 s) and every path
// inside root.
func kubeletConfiguration(c *Config, root string) (*options.KubeletFlags, *kubeletconfig.KubeletConfiguration) {
	f := options.NewKubeletFlags()
	f.RootDirectory = root
	f.CertDirectory = filepath.Join(root, "pki")
	if c.CertDirectory != "" {
		f.CertDirectory = c.CertDirectory
	}
	f.HostnameOverride = c.NodeName
	f.MinimumGCAge = metav1.Duration{Duration: time.Minute}
	f.MaxContainerCount = 100
	f.MaxPerPodContainerCount = 2
	f.NodeLabels = c.NodeLabels

	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		// Only fails if the kubelet's own defaulting is broken.
		panic(fmt.Sprintf("kubelet default configuration: %v", err))
	}
	kc.ImageServiceEndpoint = "unix:///run/containerd/containerd.sock"
	kc.StaticPodURL = ""
	kc.StaticPodPath = filepath.Join(root, "static-pods")
	kc.PodLogsDir = filepath.Join(root, "pod-logs")
	kc.EnableServer = true
	kc.Address = c.KubeletAddress
	kc.Port = int32(c.KubeletPort)
	kc.ReadOnlyPort = int32(c.KubeletReadOnlyPort)
	kc.FileCheckFrequency.Duration = 20 * time.Second
	kc.HTTPCheckFrequency.Duration = 20 * time.Second
	kc.NodeStatusUpdateFrequency.Duration = 10 * time.Second
	kc.NodeStatusReportFrequency.Duration = 5 * time.Minute
	kc.SyncFrequency.Duration = 10 * time.Second
	kc.EvictionPressureTransitionPeriod.Duration = 5 * time.Minute
	kc.MaxPods = int32(c.MaxPods)
	kc.PodsPerCore = 0
	// A kubelet of a real cluster knows its cluster DNS; without it every
	// pod would cost two MissingClusterDNS events.
	kc.ClusterDNS = c.ClusterDNS
	kc.ImageGCHighThresholdPercent = 90
	kc.ImageGCLowThresholdPercent = 80
	kc.ProviderID = "kubemark://" + c.NodeName
	kc.VolumeStatsAggPeriod.Duration = time.Minute
	kc.CgroupRoot = ""
	kc.CgroupsPerQOS = false
	kc.CPUCFSQuota = true
	kc.EnableControllerAttachDetach = false
	kc.EnableDebuggingHandlers = true
	kc.HairpinMode = kubeletconfig.HairpinVeth
	kc.MaxOpenFiles = 1024
	kc.RegistryBurst = 10
	kc.RegistryPullQPS = 5.0
	kc.ResolverConfig = kubetypes.ResolvConfDefault
	kc.KubeletCgroups = "/kubelet"
	kc.SystemCgroups = ""
	kc.SerializeImagePulls = true
	kc.ProtectKernelDefaults = false
	kc.RegisterNode = true
	kc.RegisterWithTaints = c.RegisterWithTaints
	kc.LocalStorageCapacityIsolation = true
	return f, kc
}

// volumePlugins are the plugins upstream kubemark registers; with the fake
// mounter none of them touches the machine.
func volumePlugins() []volume.VolumePlugin {
	var plugins []volume.VolumePlugin
	plugins = append(plugins, emptydir.ProbeVolumePlugins()...)
	plugins = append(plugins, hostpath.FakeProbeVolumePlugins(volume.VolumeConfig{})...)
	plugins = append(plugins, nfs.ProbeVolumePlugins(volume.VolumeConfig{})...)
	plugins = append(plugins, secret.ProbeVolumePlugins()...)
	plugins = append(plugins, iscsi.ProbeVolumePlugins()...)
	plugins = append(plugins, downwardapi.ProbeVolumePlugins()...)
	plugins = append(plugins, fc.ProbeVolumePlugins()...)
	plugins = append(plugins, configmap.ProbeVolumePlugins()...)
	plugins = append(plugins, projected.ProbeVolumePlugins()...)
	plugins = append(plugins, local.ProbeVolumePlugins()...)
	plugins = append(plugins, csi.ProbeVolumePlugins()...)
	return plugins
}
