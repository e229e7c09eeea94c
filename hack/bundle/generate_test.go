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

package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// input is a small rendered config/manifests: base CSV, one CRD, a sample, the manager and its
// RBAC, a daemon ServiceAccount, webhooks, a cert Secret and things OLM does not install.
const input = `
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: op.v0.0.0
  annotations: {capabilities: Basic Install}
spec:
  displayName: Op
  install: {strategy: deployment, spec: {deployments: null}}
  customresourcedefinitions:
    owned:
    - name: widgets.example.org
      kind: Widget
      version: v0
      displayName: Widget
      description: A widget.
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.org}
spec:
  group: example.org
  names: {kind: Widget, plural: widgets, listKind: WidgetList, singular: widget}
  scope: Namespaced
  versions:
  - {name: v1beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
---
apiVersion: example.org/v1
kind: Widget
metadata: {name: b-sample}
---
apiVersion: example.org/v1
kind: Widget
metadata: {name: a-sample}
---
apiVersion: v1
kind: Namespace
metadata: {name: op-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: op-manager, namespace: op-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: op-daemon, namespace: op-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: op-manager-role}
rules: [{apiGroups: [example.org], resources: [widgets], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: op-viewer}
rules: [{apiGroups: [example.org], resources: [widgets], verbs: [list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: op-leases, namespace: op-system}
rules: [{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: op-manager}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: op-manager-role}
subjects: [{kind: ServiceAccount, name: op-manager, namespace: op-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: op-daemon-leases, namespace: op-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: op-leases}
subjects: [{kind: ServiceAccount, name: op-daemon, namespace: op-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: op-daemon-view, namespace: op-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: op-manager-role}
subjects: [{kind: ServiceAccount, name: op-daemon, namespace: op-system}]
---
apiVersion: v1
kind: Secret
metadata: {name: op-cert, namespace: op-system}
---
apiVersion: v1
kind: Service
metadata: {name: op-webhook, namespace: op-system}
spec: {ports: [{port: 443, targetPort: 9443}]}
---
apiVersion: v1
kind: Service
metadata: {name: op-metrics, namespace: op-system}
spec: {ports: [{port: 8443, targetPort: 8443}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: op-manager, namespace: op-system, labels: {app: op}}
spec:
  selector: {matchLabels: {app: op}}
  template:
    metadata: {labels: {app: op}}
    spec:
      serviceAccountName: op-manager
      containers:
      - name: manager
        image: controller:latest
        args: [--leader-elect, --cert-mode=self]
        volumeMounts:
        - {name: cert, mountPath: /tmp/k8s-webhook-server/serving-certs}
        - {name: scratch, mountPath: /scratch}
      volumes:
      - {name: cert, secret: {secretName: op-cert}}
      - {name: scratch, emptyDir: {}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: op-mutating}
webhooks:
- name: mwidget.example.org
  clientConfig: {service: {name: op-webhook, namespace: op-system, path: /mutate}}
  namespaceSelector: {matchLabels: {a: b}}
  sideEffects: None
  admissionReviewVersions: [v1]
  failurePolicy: Ignore
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: op-policy}
spec: {}
`

const (
	managerImage = "registry.example/op:v1.2.3"
	daemonImage  = "registry.example/op-daemon:v1.2.3"
	createdAt    = "2026-01-01T00:00:00Z"
	managerName  = "op-manager"
	certModeOLM  = "--cert-mode=olm"
	certModeSelf = "--cert-mode=self"
	otherArg     = "--b"
)

func testOptions() Options {
	return Options{Package: "op", Version: "1.2.3", Channels: []string{"stable"}, DefaultChannel: "stable",
		ManagerImage: managerImage, DaemonImage: daemonImage, CreatedAt: createdAt}
}

func generateInput(t *testing.T) *Bundle {
	t.Helper()
	objs, err := readObjects(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(objs, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGenerateCSV(t *testing.T) {
	b := generateInput(t)
	csv := b.CSV
	if csv.Name != "op.v1.2.3" || csv.Spec.Version.String() != "1.2.3" {
		t.Errorf("name/version = %s/%s", csv.Name, csv.Spec.Version.String())
	}
	if csv.Annotations["createdAt"] != createdAt || csv.Annotations["containerImage"] != managerImage {
		t.Errorf("annotations = %v", csv.Annotations)
	}
	ex := csv.Annotations["alm-examples"]
	if strings.Index(ex, "a-sample") > strings.Index(ex, "b-sample") || !strings.Contains(ex, `"kind": "Widget"`) {
		t.Errorf("alm-examples not the sorted samples: %s", ex)
	}
	owned := csv.Spec.CustomResourceDefinitions.Owned
	if len(owned) != 1 || owned[0].Version != "v1" || owned[0].Description != "A widget." {
		t.Errorf("owned = %+v, want storage version v1 with the base description", owned)
	}
	want := []operatorsv1alpha1.RelatedImage{{Name: "manager", Image: managerImage}, {Name: "daemon", Image: daemonImage}}
	if !reflect.DeepEqual(csv.Spec.RelatedImages, want) {
		t.Errorf("relatedImages = %+v", csv.Spec.RelatedImages)
	}
}

func TestGenerateInstallStrategy(t *testing.T) {
	b := generateInput(t)
	st := b.CSV.Spec.InstallStrategy.StrategySpec
	if len(st.DeploymentSpecs) != 1 || st.DeploymentSpecs[0].Name != managerName {
		t.Fatalf("deployments = %+v", st.DeploymentSpecs)
	}
	pod := st.DeploymentSpecs[0].Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != managerImage {
		t.Errorf("image = %s", c.Image)
	}
	if !reflect.DeepEqual(c.Args, []string{"--leader-elect", certModeOLM}) {
		t.Errorf("args = %v", c.Args)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != "scratch" ||
		len(pod.Volumes) != 1 || pod.Volumes[0].Name != "scratch" {
		t.Errorf("the certificate volume must go (OLM mounts its own there), others stay: %+v %+v",
			c.VolumeMounts, pod.Volumes)
	}
	if !reflect.DeepEqual(c.Env, []corev1.EnvVar{{Name: "RELATED_IMAGE_DAEMON", Value: daemonImage}}) {
		t.Errorf("env = %+v", c.Env)
	}

	// Manager: the ClusterRole through its ClusterRoleBinding. Daemon: the Role and the
	// ClusterRole bound in the namespace, both as namespaced permissions.
	if len(st.ClusterPermissions) != 1 || st.ClusterPermissions[0].ServiceAccountName != managerName ||
		st.ClusterPermissions[0].Rules[0].Verbs[0] != "get" {
		t.Errorf("clusterPermissions = %+v", st.ClusterPermissions)
	}
	if len(st.Permissions) != 1 || st.Permissions[0].ServiceAccountName != "op-daemon" ||
		len(st.Permissions[0].Rules) != 2 {
		t.Errorf("permissions = %+v", st.Permissions)
	}

	hooks := b.CSV.Spec.WebhookDefinitions
	if len(hooks) != 1 {
		t.Fatalf("webhooks = %+v", hooks)
	}
	h := hooks[0]
	if h.Type != operatorsv1alpha1.MutatingAdmissionWebhook || h.DeploymentName != managerName || h.ContainerPort != 443 ||
		h.TargetPort.IntValue() != 9443 || *h.WebhookPath != "/mutate" || string(*h.FailurePolicy) != "Ignore" {
		t.Errorf("webhook = %+v", h)
	}
}

func TestGenerateManifests(t *testing.T) {
	b := generateInput(t)
	names := make([]string, 0, len(b.Manifests))
	for _, m := range b.Manifests {
		names = append(names, manifestFileName(m))
		if m.GetNamespace() != "" {
			t.Errorf("%s keeps namespace %s", m.GetName(), m.GetNamespace())
		}
	}
	want := []string{"example.org_widgets.yaml", "op-metrics_v1_service.yaml"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("manifests = %v, want %v", names, want)
	}
	dropped := strings.Join(b.Dropped, "\n")
	for _, d := range []string{"Namespace/op-system", "Secret/op-cert", "Service/op-webhook",
		"ValidatingAdmissionPolicy/op-policy", "ServiceAccount/op-manager", "ServiceAccount/op-daemon",
		"MutatingWebhookConfiguration/op-mutating", "ClusterRole/op-viewer: not CSV permissions"} {
		if !strings.Contains(dropped, d) {
			t.Errorf("%s not reported as left out:\n%s", d, dropped)
		}
	}
}

// Two runs give byte-identical files: `make verify` compares a fresh bundle with the commit.
func TestGenerateIsReproducible(t *testing.T) {
	a, err := generateInput(t).files("bundle", "bundle.Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, err := generateInput(t).files("bundle", "bundle.Dockerfile")
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("%d files, then %d", len(a), len(b))
		}
		for k := range a {
			if !bytes.Equal(a[k], b[k]) {
				t.Fatalf("%s differs between runs", k)
			}
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	objs, err := readObjects(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	without := func(kind string) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() != kind {
				out = append(out, o)
			}
		}
		return out
	}
	gadgets := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets.example.org"},
		"spec": map[string]any{"group": "example.org", "names": map[string]any{"kind": "Gadget", "plural": "gadgets"},
			"versions": []any{map[string]any{"name": "v1", "storage": true}}},
	}}
	withExtraCRD := append(append([]*unstructured.Unstructured(nil), objs...), gadgets)
	cases := []struct {
		name   string
		objs   []*unstructured.Unstructured
		mutate func(*Options)
		want   string
	}{
		{"bad version", objs, func(o *Options) { o.Version = "v1" }, "not semver"},
		{"no createdAt", objs, func(o *Options) { o.CreatedAt = "" }, "createdAt"},
		{"default channel not listed", objs, func(o *Options) { o.DefaultChannel = "fast" }, "default channel"},
		{"no base CSV", without("ClusterServiceVersion"), func(*Options) {}, "no base ClusterServiceVersion"},
		{"no Deployment", without("Deployment"), func(*Options) {}, "exactly one Deployment"},
		{"CRD without description", withExtraCRD, func(*Options) {}, "gadgets.example.org has no owned entry"},
		{"manager ServiceAccount missing", without("ServiceAccount"), func(*Options) {}, "ServiceAccount"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			tc.mutate(&o)
			_, err := Generate(tc.objs, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestSetArg(t *testing.T) {
	cases := []struct {
		in, want []string
	}{
		{[]string{"--a"}, []string{"--a", certModeOLM}},
		{[]string{certModeSelf, otherArg}, []string{otherArg, certModeOLM}},
		{[]string{"--cert-mode", "self", otherArg}, []string{otherArg, certModeOLM}},
		{nil, []string{certModeOLM}},
	}
	for _, tc := range cases {
		if got := setArg(tc.in, "--cert-mode", "olm"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("setArg(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestOlmizeKeepsOtherContainers(t *testing.T) {
	d := &appsv1.Deployment{}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "sidecar", Image: "s:1", Args: []string{certModeSelf}}}
	olmize(d, testOptions())
	if c := d.Spec.Template.Spec.Containers[0]; c.Image != "s:1" || c.Args[0] != certModeSelf {
		t.Fatalf("sidecar changed: %+v", c)
	}
}

// The kustomize install writes the self-managed certificate into an emptyDir: the Secret is
// found through --webhook-cert-secret, which OLM mode does not need.
func TestOlmizeFindsTheCertSecretByFlag(t *testing.T) {
	for _, args := range [][]string{
		{certModeSelf, "--webhook-cert-secret=op-cert", "--a"},
		{certModeSelf, "--webhook-cert-secret", "op-cert", "--a"},
	} {
		d := &appsv1.Deployment{}
		spec := &d.Spec.Template.Spec
		spec.Containers = []corev1.Container{{Name: "manager", Args: args, VolumeMounts: []corev1.VolumeMount{
			{Name: "cert", MountPath: OLMCertDir}, {Name: "scratch", MountPath: "/scratch"},
		}}}
		spec.Volumes = []corev1.Volume{
			{Name: "cert", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}
		removed := olmize(d, testOptions())
		if !reflect.DeepEqual(removed, map[string]bool{"op-cert": true}) {
			t.Errorf("%v: removed Secrets = %v, want op-cert", args, removed)
		}
		if got, want := spec.Containers[0].Args, []string{"--a", certModeOLM}; !reflect.DeepEqual(got, want) {
			t.Errorf("%v: args = %v, want %v", args, got, want)
		}
		if len(spec.Volumes) != 1 || spec.Volumes[0].Name != "scratch" || len(spec.Containers[0].VolumeMounts) != 1 {
			t.Errorf("%v: the certificate volume was kept: %+v", args, spec.Volumes)
		}
	}
}
