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

package apps

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/probesig"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// fullPod is an enrolled pod as a cluster returns it: a probed sidecar with a named port, an
// app container, managed fields, foreign annotations and a full status.
func fullPod() *corev1.Pod {
	now := metav1.Now()
	always := corev1.ContainerRestartPolicyAlways
	ctx := `[{"name":"proxy","livenessProbe":{"tcpSocket":{"port":"admin"}}},` +
		`{"name":"app","livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":5}}]`
	ctr := func(name string, port string, n int32) corev1.Container {
		return corev1.Container{Name: name, Image: "registry.example/" + name + ":1", Command: []string{"/bin/" + name},
			Ports: []corev1.ContainerPort{{Name: port, ContainerPort: n, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString(port)}}},
			VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/" + name}},
		}
	}
	proxy := ctr("proxy", "admin", 9901)
	proxy.RestartPolicy = &always
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: "uid-1", ResourceVersion: "42",
			Labels: map[string]string{"app": "web", appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue},
			Annotations: map[string]string{
				appsv1alpha1.AnnotationProbeContext:      ctx,
				appsv1alpha1.AnnotationEnabled:           "true",
				appsv1alpha1.AnnotationRestartDisabled:   "true",
				appsv1alpha1.AnnotationKruiseEnabled:     "true",
				"crr.enhancedliveness.io/probe":          "kept: a subdomain of the operator's",
				"kubectl.kubernetes.io/restartedAt":      "2026-11-30T00:00:00Z",
				"sidecar.istio.io/status":                `{"initContainers":["istio-init"]}`,
				"notenhancedliveness.io/x":               "dropped: not the operator's domain",
				"kubectl.kubernetes.io/last-applied-cfg": "{}",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7c9d",
				UID: "rs-1", Controller: ptr.To(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Spec: corev1.PodSpec{
			NodeName: "n1", RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr.To[int64](45),
			InitContainers:     []corev1.Container{proxy, ctr("migrate", "unused", 1)},
			Containers:         []corev1.Container{ctr("app", "http", 8080)},
			Volumes:            []corev1.Volume{{Name: "config"}},
			ServiceAccountName: "web", Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.7", HostIP: "192.168.0.1", QOSClass: corev1.PodQOSBurstable,
			PodIPs:     []corev1.PodIP{{IP: "10.0.0.7"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "migrate", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", Message: "a long termination message"}}},
				{Name: "proxy", ContainerID: "containerd://p1", State: running, Ready: true, Started: ptr.To(true),
					RestartCount: 2, Image: "registry.example/proxy:1", ImageID: "sha256:1"},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", ContainerID: "containerd://a1", State: running,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: "oom"}},
				Ready:                true, RestartCount: 1, Image: "registry.example/app:1", ImageID: "sha256:2"}},
		},
	}
}

func TestStripPodForCacheKeepsWhatControllersRead(t *testing.T) {
	full := fullPod()
	out, err := StripPodForCache(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)

	if got.ManagedFields != nil {
		t.Errorf("managedFields kept: %v", got.ManagedFields)
	}
	wantAnn := []string{appsv1alpha1.AnnotationProbeContext, appsv1alpha1.AnnotationEnabled,
		appsv1alpha1.AnnotationRestartDisabled, appsv1alpha1.AnnotationKruiseEnabled, "crr.enhancedliveness.io/probe"}
	if len(got.Annotations) != len(wantAnn) {
		t.Errorf("annotations = %v, want exactly %v", got.Annotations, wantAnn)
	}
	for _, k := range wantAnn {
		if got.Annotations[k] != full.Annotations[k] {
			t.Errorf("annotation %s = %q, want %q", k, got.Annotations[k], full.Annotations[k])
		}
	}
	for _, same := range []struct {
		what      string
		got, want any
	}{
		{"name/namespace/uid/rv", []string{got.Name, got.Namespace, string(got.UID), got.ResourceVersion},
			[]string{full.Name, full.Namespace, string(full.UID), full.ResourceVersion}},
		{"labels", got.Labels, full.Labels},
		{"ownerReferences", got.OwnerReferences, full.OwnerReferences},
		{"nodeName", got.Spec.NodeName, full.Spec.NodeName},
		{"restartPolicy", got.Spec.RestartPolicy, full.Spec.RestartPolicy},
		{"terminationGracePeriodSeconds", got.Spec.TerminationGracePeriodSeconds, full.Spec.TerminationGracePeriodSeconds},
		{"phase", got.Status.Phase, full.Status.Phase},
		{"podIP", got.Status.PodIP, full.Status.PodIP},
		{"conditions", got.Status.Conditions, full.Status.Conditions},
	} {
		if !equality.Semantic.DeepEqual(same.got, same.want) {
			t.Errorf("%s = %v, want %v", same.what, same.got, same.want)
		}
	}
	proxy := got.Spec.InitContainers[0]
	if proxy.Name != "proxy" || *proxy.RestartPolicy != corev1.ContainerRestartPolicyAlways ||
		proxy.Ports[0].Name != "admin" || proxy.Image != "" || proxy.Env != nil || proxy.ReadinessProbe != nil {
		t.Errorf("sidecar = %+v, want name, ports and restartPolicy only", proxy)
	}
	if got.Spec.Volumes != nil || got.Spec.Tolerations != nil || got.Spec.ServiceAccountName != "" {
		t.Errorf("pod-level spec fields kept: %+v", got.Spec)
	}
	app := got.Status.ContainerStatuses[0]
	if app.ContainerID != "containerd://a1" || app.State.Running == nil || !app.Ready || app.RestartCount != 1 ||
		app.Image != "" || app.LastTerminationState.Terminated != nil {
		t.Errorf("app status = %+v", app)
	}
	migrate := got.Status.InitContainerStatuses[0].State.Terminated
	if migrate == nil || migrate.Reason != "Completed" || migrate.Message != "" {
		t.Errorf("terminated state = %+v, want reason kept and message dropped", migrate)
	}
	if got.Status.HostIP != "" || got.Status.PodIPs != nil || got.Status.QOSClass != "" {
		t.Errorf("status fields kept: %+v", got.Status)
	}
}

// The probe mapping of a stripped pod is the mapping of the whole pod: named ports of the app
// container and of the sidecar resolve, and the probe-context annotation, its admission signature
// and its seal survive (a stripped pod whose seal no longer verified would not be probed at all).
func TestStripPodForCacheKeepsTheMapping(t *testing.T) {
	full := fullPod()
	full.CreationTimestamp = metav1.Now()
	testutil.Seal(testutil.Admit(full))
	trust := func(p *corev1.Pod) error {
		if _, err := probesig.VerifyAdmission(testutil.TrustedKeys(), p); err != nil {
			return err
		}
		_, err := probesig.VerifySeal(testutil.TrustedKeys(), p)
		return err
	}
	stripped, _ := StripPodForCache(full.DeepCopy())
	want, wantProblems := desiredPodProbes([]corev1.Pod{*full}, trust)
	got, gotProblems := desiredPodProbes([]corev1.Pod{*stripped.(*corev1.Pod)}, trust)
	if len(wantProblems) != 0 || len(gotProblems) != 0 {
		t.Fatalf("problems: full %v, stripped %v", wantProblems, gotProblems)
	}
	if len(want) != 1 || len(want[0].Probes) != 2 {
		t.Fatalf("the whole pod maps to %+v, want two probes", want)
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("stripped pod maps to %+v, want %+v", got, want)
	}
}

func TestStripPodForCacheIsIdempotentAndSmaller(t *testing.T) {
	once, _ := StripPodForCache(fullPod())
	again, _ := StripPodForCache(once.(*corev1.Pod).DeepCopy())
	if !equality.Semantic.DeepEqual(once, again) {
		t.Errorf("second pass changed the pod:\n%+v\n%+v", once, again)
	}
	full, _ := json.Marshal(fullPod())
	small, _ := json.Marshal(once)
	if len(small) >= len(full) {
		t.Errorf("stripped pod is %d bytes of JSON, the whole pod %d", len(small), len(full))
	}
}

func TestStripPodForCacheLeavesOtherObjects(t *testing.T) {
	tomb := toolscache.DeletedFinalStateUnknown{Key: "ns/web-1", Obj: fullPod()}
	out, err := StripPodForCache(tomb)
	if err != nil || !equality.Semantic.DeepEqual(out, tomb) {
		t.Errorf("tombstone changed: %v, %v", out, err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{"a": "b"}}}
	if out, _ := StripPodForCache(node); out.(*corev1.Node).Annotations["a"] != "b" {
		t.Errorf("a Node was changed: %+v", out)
	}
}
