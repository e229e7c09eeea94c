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

package managercache

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

func TestStripPodKeepsWhatControllersRead(t *testing.T) {
	full := testutil.FullPod()
	out, err := StripPod(full.DeepCopy())
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

func TestStripPodIsIdempotentAndSmaller(t *testing.T) {
	once, _ := StripPod(testutil.FullPod())
	again, _ := StripPod(once.(*corev1.Pod).DeepCopy())
	if !equality.Semantic.DeepEqual(once, again) {
		t.Errorf("second pass changed the pod:\n%+v\n%+v", once, again)
	}
	full, _ := json.Marshal(testutil.FullPod())
	small, _ := json.Marshal(once)
	if len(small) >= len(full) {
		t.Errorf("stripped pod is %d bytes of JSON, the whole pod %d", len(small), len(full))
	}
}

func TestStripPodLeavesOtherObjects(t *testing.T) {
	tomb := toolscache.DeletedFinalStateUnknown{Key: "ns/web-1", Obj: testutil.FullPod()}
	out, err := StripPod(tomb)
	if err != nil || !equality.Semantic.DeepEqual(out, tomb) {
		t.Errorf("tombstone changed: %v, %v", out, err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{"a": "b"}}}
	if out, _ := StripPod(node); out.(*corev1.Node).Annotations["a"] != "b" {
		t.Errorf("a Node was changed: %+v", out)
	}
}

// StripPod keeps exactly what keptPodFields declares: a pod with every field set (fill) is
// stripped, then every field of a type with a rule must be set if the rule keeps it and empty if
// not, and every field of other types reached through kept fields must still be set.
func TestStripPodKeepsExactlyTheDeclaredFields(t *testing.T) {
	pod := &corev1.Pod{}
	fill(reflect.ValueOf(pod).Elem(), 0)
	pod.Status.Conditions[0].Type = corev1.PodReady // the one condition kept
	pod.Annotations = map[string]string{appsv1alpha1.AnnotationEnabled: "true", "example.com/other": "x"}
	out, err := StripPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if want := map[string]string{appsv1alpha1.AnnotationEnabled: "true"}; !equality.Semantic.DeepEqual(got.Annotations, want) {
		t.Errorf("annotations = %v, want %v", got.Annotations, want)
	}
	seen := map[reflect.Type]bool{}
	checkKept(t, reflect.ValueOf(got).Elem(), "pod", seen)
	for rt := range keptPodFields {
		if !seen[rt] {
			t.Errorf("keptPodFields has a rule for %s, which a stripped pod does not contain", rt)
		}
	}
}

// fill sets every exported field of v, recursively: strings "x", numbers 1, true, one element in
// slices and maps.
func fill(v reflect.Value, depth int) {
	if depth > 20 {
		return
	}
	switch v.Interface().(type) {
	case time.Time:
		v.Set(reflect.ValueOf(time.Unix(1_700_000_000, 0)))
		return
	case resource.Quantity:
		v.Set(reflect.ValueOf(resource.MustParse("1")))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// checkKept walks a stripped value and reports what StripPod kept against keptPodFields.
func checkKept(t *testing.T, v reflect.Value, path string, seen map[reflect.Type]bool) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			t.Errorf("%s: dropped, but keptPodFields keeps it", path)
			return
		}
		checkKept(t, v.Elem(), path, seen)
		return
	case reflect.Slice:
		if v.Len() == 0 {
			t.Errorf("%s: dropped, but keptPodFields keeps it", path)
		}
		for i := range v.Len() {
			checkKept(t, v.Index(i), path+"[]", seen)
		}
		return
	case reflect.Struct:
	default:
		if v.IsZero() {
			t.Errorf("%s: dropped, but keptPodFields keeps it", path)
		}
		return
	}
	seen[v.Type()] = true
	rule, hasRule := keptPodFields[v.Type()]
	exported := 0
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		exported++
		fp := path + "." + f.Name
		if hasRule && !rule.keeps(f.Name) {
			if !v.Field(i).IsZero() {
				t.Errorf("%s: kept, but keptPodFields drops it", fp)
			}
			continue
		}
		checkKept(t, v.Field(i), fp, seen)
	}
	if exported == 0 && v.IsZero() { // e.g. a Quantity
		t.Errorf("%s: dropped, but keptPodFields keeps it", path)
	}
}

func TestStripPodKeepsOnlyTheReadyCondition(t *testing.T) {
	at := metav1.NewTime(time.Unix(1_700_000_000, 0))
	for _, tc := range []struct {
		name string
		in   []corev1.PodCondition
		want []corev1.PodCondition
	}{
		{"none", nil, nil},
		{"no Ready among others", []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}, nil},
		{"Ready false among the kubelet's five, times and message dropped", []corev1.PodCondition{
			{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue, LastTransitionTime: at},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: at, Reason: "ContainersNotReady",
				Message: "containers with unready status: [app]"},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, LastTransitionTime: at},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
		}, []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testutil.FullPod()
			pod.Status.Conditions = tc.in
			out, _ := StripPod(pod)
			if got := out.(*corev1.Pod).Status.Conditions; !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("conditions = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Replicas decoded one by one share the strings that are the same for all of them once cached,
// and keep their own where they differ.
func TestStripPodSharesTheStringsOfReplicas(t *testing.T) {
	decoded := func(name string) *corev1.Pod {
		b, err := json.Marshal(testutil.FullPod())
		if err != nil {
			t.Fatal(err)
		}
		p := &corev1.Pod{}
		if err := json.Unmarshal(b, p); err != nil {
			t.Fatal(err)
		}
		p.Name = name
		out, _ := StripPod(p)
		return out.(*corev1.Pod)
	}
	a, b := decoded("web-1"), decoded("web-2")
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are not one shared string", what, x, y)
		}
	}
	same("label value", a.Labels["app"], b.Labels["app"])
	same("probe context", a.Annotations[appsv1alpha1.AnnotationProbeContext], b.Annotations[appsv1alpha1.AnnotationProbeContext])
	same("owner name", a.OwnerReferences[0].Name, b.OwnerReferences[0].Name)
	same("container name", a.Spec.Containers[0].Name, b.Spec.Containers[0].Name)
	same("port name", a.Spec.Containers[0].Ports[0].Name, b.Spec.Containers[0].Ports[0].Name)
	same("node", a.Spec.NodeName, b.Spec.NodeName)
	same("namespace", a.Namespace, b.Namespace)
	if a.Name == b.Name {
		t.Errorf("names %q and %q must stay each pod's own", a.Name, b.Name)
	}
	// Whole values replicas have in common are one shared value.
	if reflect.ValueOf(a.Labels).Pointer() != reflect.ValueOf(b.Labels).Pointer() {
		t.Error("replicas' equal label maps are not one shared map")
	}
	if &a.OwnerReferences[0] != &b.OwnerReferences[0] {
		t.Error("replicas' equal owner references are not one shared slice")
	}
	if &a.Status.Conditions[0] != &b.Status.Conditions[0] {
		t.Error("replicas' Ready conditions are not one shared slice")
	}
	if &a.Spec.Containers[0] != &b.Spec.Containers[0] {
		t.Error("replicas' stripped containers are not one shared slice")
	}
	// A pod whose container differs (another port) has containers of its own.
	other := decoded("web-4")
	other.Spec.Containers = []corev1.Container{{Name: a.Spec.Containers[0].Name,
		Ports: []corev1.ContainerPort{{Name: "alt", ContainerPort: 9999, Protocol: corev1.ProtocolTCP}}}}
	o2, _ := StripPod(other)
	if got := o2.(*corev1.Pod).Spec.Containers; len(got) != 1 || got[0].Ports[0].ContainerPort != 9999 ||
		a.Spec.Containers[0].Ports[0].ContainerPort == 9999 {
		t.Errorf("containers of a pod with other ports: %+v", got)
	}
	// A label that names the pod (a StatefulSet's) keeps the map the pod's own.
	sts := func(name string) *corev1.Pod {
		p := decoded(name)
		p.Labels = map[string]string{"app": "db", "statefulset.kubernetes.io/pod-name": name}
		out, _ := StripPod(p)
		return out.(*corev1.Pod)
	}
	c, d := sts("db-0"), sts("db-1")
	if c.Labels["statefulset.kubernetes.io/pod-name"] != "db-0" || d.Labels["statefulset.kubernetes.io/pod-name"] != "db-1" {
		t.Errorf("per-pod labels mixed up: %v %v", c.Labels, d.Labels)
	}
	same("label value of a per-pod map", c.Labels["app"], d.Labels["app"])
	// Different labels, different maps.
	e := decoded("web-3")
	e.Labels = map[string]string{"app": "web", "track": "canary"}
	e2, _ := StripPod(e)
	if got := e2.(*corev1.Pod).Labels; len(got) != 2 || got["track"] != "canary" || a.Labels["track"] != "" {
		t.Errorf("labels of a pod with other labels: %v (shared: %v)", got, a.Labels)
	}
}

func TestInternerStartsOverWhenFull(t *testing.T) {
	var in interner
	first := in.str(string([]byte("shared")))
	for i := range maxInterned {
		in.str(fmt.Sprintf("v%d", i))
	}
	again := in.str(string([]byte("shared")))
	if again != first {
		t.Fatalf("interned %q, want %q", again, first)
	}
	if len(in.t.m) > maxInterned {
		t.Errorf("table holds %d strings, more than %d", len(in.t.m), maxInterned)
	}
	if in.str("") != "" {
		t.Error("empty string changed")
	}
}
