/*
Copyright 2026 The enhanced-liveness-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package daemonset keeps the node daemon's DaemonSet in shape: Build (spec.go) makes it from the
// manager's configuration, purely, and the Reconciler (controller.go) applies it.
package daemonset

import (
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/daemonnodes"
)

const (
	// ManagedByValue is the app.kubernetes.io/managed-by label of the DaemonSet; its controller
	// watches only objects with this label.
	ManagedByValue = appsv1alpha1.ManagedByOperator

	// DefaultName is the DaemonSet's name and, in the shipped manifests, its ServiceAccount's.
	DefaultName = "enhanced-liveness-operator-daemon"

	// DefaultMetricsPort and DefaultHealthPort are host ports (the daemon uses hostNetwork),
	// chosen away from the kubelet's 10248-10250 and common exporters.
	DefaultMetricsPort = 10290
	DefaultHealthPort  = 10291

	containerName = "daemon"
	// PriorityClass keeps the daemon scheduled on full nodes: without it nothing probes.
	PriorityClass = "system-node-critical"
)

// Labels every daemon pod and the DaemonSet carry. The selector uses the first two only, so
// adding a label later never needs a DaemonSet re-creation (selectors are immutable).
var selectorLabels = map[string]string{
	"app.kubernetes.io/name":      "enhanced-liveness-daemon",
	"app.kubernetes.io/component": "daemon",
}

// CRISocketDirs are the host directories of the CRI sockets the daemon auto-detects
// (containerd, CRI-O; /var/run is a symlink to /run on current distributions). Directories
// rather than socket files are mounted so that a runtime restart, which re-creates the socket,
// does not leave a stale bind mount.
var CRISocketDirs = []struct{ Name, Path string }{
	{Name: "containerd-socket", Path: "/run/containerd"},
	{Name: "crio-socket", Path: "/run/crio"},
}

// Config is what the manager's flags decide about the daemon.
type Config struct {
	Name            string // DaemonSet name
	Namespace       string // operator namespace
	ServiceAccount  string
	Image           string
	ImagePullPolicy corev1.PullPolicy
	MetricsPort     int32
	HealthPort      int32
	// CRIEndpoint overrides the daemon's CRI detection (unix://<path>); a socket outside the
	// default directories gets its directory mounted read-only too.
	CRIEndpoint string
	// ExtraArgs are appended to the daemon's command line (e.g. --memory-limit=128Mi); each one a
	// daemon flag that the DaemonSet does not set itself (ValidateExtraArgs).
	ExtraArgs []string
	Resources corev1.ResourceRequirements
}

// DefaultResources fit a daemon probing a few hundred containers; the limit leaves room for
// bursts of exec probes without letting a bug starve the node.
func DefaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("20m"),
			corev1.ResourceMemory: resource.MustParse("64Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("500m"),
			corev1.ResourceMemory: resource.MustParse("256Mi"),
		},
	}
}

// Validate reports configuration that cannot produce a working DaemonSet.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("daemon DaemonSet name is empty"))
	}
	if c.Namespace == "" {
		errs = append(errs, errors.New("operator namespace is empty"))
	}
	if c.ServiceAccount == "" {
		errs = append(errs, errors.New("daemon service account is empty"))
	}
	if c.Image == "" {
		errs = append(errs, errors.New("daemon image is empty (set --daemon-image or RELATED_IMAGE_DAEMON)"))
	}
	for _, p := range []int32{c.MetricsPort, c.HealthPort} {
		if p <= 0 || p > 65535 {
			errs = append(errs, errors.New("daemon port "+strconv.Itoa(int(p))+" out of range"))
		}
	}
	if c.MetricsPort == c.HealthPort {
		errs = append(errs, errors.New("daemon metrics and health ports are equal"))
	}
	if err := ValidateCRIEndpoint(c.CRIEndpoint); err != nil {
		errs = append(errs, err)
	}
	if err := ValidateExtraArgs(c.ExtraArgs); err != nil {
		errs = append(errs, err)
	}
	if err := ValidateResources(c.Resources); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ValidateCRIEndpoint accepts "" (auto-detection) or unix://<absolute path>.
func ValidateCRIEndpoint(ep string) error {
	if ep == "" {
		return nil
	}
	if p, ok := strings.CutPrefix(ep, "unix://"); !ok || !filepath.IsAbs(p) {
		return errors.New("daemon CRI endpoint " + ep + " is not unix:///<absolute path>")
	}
	return nil
}

// objectLabels returns the labels of the DaemonSet and its pods.
func objectLabels() map[string]string {
	l := map[string]string{
		"app.kubernetes.io/managed-by": ManagedByValue,
		"app.kubernetes.io/part-of":    "enhanced-liveness-operator",
	}
	maps.Copy(l, selectorLabels)
	return l
}

// ManagedSelector selects the objects the manager itself owns.
func ManagedSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": ManagedByValue})
}

// Build returns the desired DaemonSet. Every field the operator cares about is set explicitly,
// so that applying it repairs any edit of those fields.
func Build(c Config) *appsv1.DaemonSet {
	lbls := objectLabels()
	sel := maps.Clone(selectorLabels)
	pullPolicy := c.ImagePullPolicy
	if pullPolicy == "" {
		pullPolicy = corev1.PullIfNotPresent
	}
	maxUnavailable := intstr.FromString("10%")
	maxSurge := intstr.FromInt32(0)

	args := make([]string, 0, 3+len(c.ExtraArgs))
	args = append(args,
		"--metrics-bind-address=:"+strconv.Itoa(int(c.MetricsPort)),
		"--health-probe-bind-address=:"+strconv.Itoa(int(c.HealthPort)),
	)
	dirs := slices.Clone(CRISocketDirs)
	if c.CRIEndpoint != "" {
		args = append(args, "--cri-endpoint="+c.CRIEndpoint)
		dir := filepath.Dir(strings.TrimPrefix(c.CRIEndpoint, "unix://"))
		if !slices.ContainsFunc(dirs, func(d struct{ Name, Path string }) bool { return d.Path == dir }) {
			dirs = append(dirs, struct{ Name, Path string }{Name: "cri-socket", Path: dir})
		}
	}
	args = append(args, c.ExtraArgs...)

	volumes := make([]corev1.Volume, 0, len(dirs))
	mounts := make([]corev1.VolumeMount, 0, len(dirs))
	for _, s := range dirs {
		volumes = append(volumes, corev1.Volume{
			Name: s.Name,
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: s.Path, Type: ptr.To(corev1.HostPathDirectoryOrCreate),
			}},
		})
		mounts = append(mounts, corev1.VolumeMount{Name: s.Name, MountPath: s.Path, ReadOnly: true})
	}

	return &appsv1.DaemonSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      c.Name,
			Namespace: c.Namespace,
			Labels:    lbls,
		},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{
					MaxUnavailable: &maxUnavailable,
					MaxSurge:       &maxSurge,
				},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      lbls,
					Annotations: map[string]string{"kubectl.kubernetes.io/default-container": containerName},
				},
				Spec: podSpec(c, pullPolicy, args, volumes, mounts),
			},
		},
	}
}

func podSpec(c Config, pull corev1.PullPolicy, args []string, volumes []corev1.Volume, mounts []corev1.VolumeMount) corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: c.ServiceAccount,
		// Probes dial pod IPs from the node, as the kubelet's do.
		HostNetwork:       true,
		DNSPolicy:         corev1.DNSClusterFirstWithHostNet,
		PriorityClassName: PriorityClass,
		// The pod webhook leaves their native probe to pods that can land on no node selected
		// here (internal/manager/daemonnodes).
		NodeSelector: daemonnodes.Selector(),
		// A node without a daemon has nobody probing its enrolled pods: run everywhere.
		Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		SecurityContext: &corev1.PodSecurityContext{
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:            containerName,
			Image:           c.Image,
			ImagePullPolicy: pull,
			Command:         []string{"/daemon"},
			Args:            args,
			Env: []corev1.EnvVar{
				{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}},
				{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
			},
			Ports: []corev1.ContainerPort{
				{Name: "metrics", ContainerPort: c.MetricsPort, Protocol: corev1.ProtocolTCP},
				{Name: "health", ContainerPort: c.HealthPort, Protocol: corev1.ProtocolTCP},
			},
			LivenessProbe:  httpProbe("/healthz", c.HealthPort, 15, 20),
			ReadinessProbe: httpProbe("/readyz", c.HealthPort, 5, 10),
			Resources:      c.Resources,
			// The CRI sockets are root-owned (0660): the daemon runs as UID 0 but with no
			// capabilities, no privilege escalation and a read-only root filesystem. Exec
			// probes and container stops are performed by the runtime, not by this process.
			SecurityContext: &corev1.SecurityContext{
				RunAsUser:                new(int64(0)),
				RunAsGroup:               new(int64(0)),
				RunAsNonRoot:             new(false),
				Privileged:               new(false),
				AllowPrivilegeEscalation: new(false),
				ReadOnlyRootFilesystem:   new(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
			VolumeMounts:             mounts,
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		}},
		Volumes: volumes,
	}
}

func httpProbe(path string, port int32, initialDelay, period int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTP,
		}},
		InitialDelaySeconds: initialDelay,
		PeriodSeconds:       period,
		TimeoutSeconds:      1,
		FailureThreshold:    3,
		SuccessThreshold:    1,
	}
}
