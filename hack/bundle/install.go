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
	"cmp"
	"fmt"
	"slices"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// OLMCertDir is where OLM mounts the webhook serving certificate of a CSV's Deployment.
const OLMCertDir = "/tmp/k8s-webhook-server/serving-certs"

const (
	kindCRD                = "CustomResourceDefinition"
	kindCSV                = "ClusterServiceVersion"
	kindRole               = "Role"
	kindClusterRole        = "ClusterRole"
	kindClusterRoleBinding = "ClusterRoleBinding"
	kindService            = "Service"
	becameWebhooks         = ": became webhookdefinitions (OLM creates it)"
	// OLM (v0.46) labels a ClusterRole or ClusterRoleBinding of the bundle's manifests only with
	// olm.owner, and deleting the CSV removes only cluster-scoped RBAC labelled olm.owner,
	// olm.owner.kind and olm.owner.namespace: it would outlive `operator-sdk cleanup`. OLM makes its
	// own aggregated admin/edit/view roles for owned CRDs (owned by the CRD, so deleted with it);
	// config/olm applies the metrics reader.
	clusterRBACOutlivesCSV = ": not CSV permissions, and a bundle manifest of this kind outlives the CSV " +
		"(OLM has its own admin/edit/view roles; config/olm has the metrics reader)"
)

// supportedKinds are the kinds OLM installs from a registry+v1 bundle besides the CSV and CRDs
// (the operator-registry list). Everything else is left out of the bundle and reported.
var supportedKinds = map[string]bool{
	"Secret": true, kindClusterRole: true, kindClusterRoleBinding: true, "ConfigMap": true,
	"ServiceAccount": true, kindService: true, kindRole: true, "RoleBinding": true,
	"PrometheusRule": true, "ServiceMonitor": true, "PodDisruptionBudget": true,
	"PriorityClass": true, "VerticalPodAutoscaler": true, "ConsoleYAMLSample": true,
}

type install struct {
	strategy operatorsv1alpha1.StrategyDetailsDeployment
	webhooks []operatorsv1alpha1.WebhookDescription
	extra    []*unstructured.Unstructured
	dropped  []string
}

// installStrategy builds the CSV's Deployment, permissions of every ServiceAccount and webhook
// definitions, and returns the objects that stay plain bundle manifests.
func installStrategy(in *inputs, o Options) (*install, error) {
	res := &install{}
	dep := in.deployments[0].DeepCopy()
	removedSecrets := olmize(dep, o)
	res.strategy.DeploymentSpecs = []operatorsv1alpha1.StrategyDeploymentSpec{{
		Name: dep.Name, Spec: dep.Spec, Label: dep.Labels,
	}}

	var sas []string
	var rest []*unstructured.Unstructured
	services := map[string]*corev1.Service{}
	var mutating []admissionv1.MutatingWebhookConfiguration
	var validating []admissionv1.ValidatingWebhookConfiguration
	rbac := newRBACIndex()
	for _, u := range in.others {
		var err error
		switch u.GetKind() {
		case "ServiceAccount":
			sas = append(sas, u.GetName())
		case kindRole, kindClusterRole, "RoleBinding", kindClusterRoleBinding:
			rbac.add(u)
		case "MutatingWebhookConfiguration":
			m := admissionv1.MutatingWebhookConfiguration{}
			err = fromUnstructured(u, &m)
			mutating = append(mutating, m)
		case "ValidatingWebhookConfiguration":
			v := admissionv1.ValidatingWebhookConfiguration{}
			err = fromUnstructured(u, &v)
			validating = append(validating, v)
		case kindService:
			s := &corev1.Service{}
			err = fromUnstructured(u, s)
			services[s.Name] = s
			rest = append(rest, u)
		default:
			rest = append(rest, u)
		}
		if err != nil {
			return nil, err
		}
	}
	if !contains(sas, dep.Spec.Template.Spec.ServiceAccountName) {
		return nil, fmt.Errorf("the Deployment's ServiceAccount %q is not among the manifests",
			dep.Spec.Template.Spec.ServiceAccountName)
	}
	slices.Sort(sas)
	for _, sa := range sas {
		cluster, namespaced := rbac.rulesOf(sa)
		if len(cluster) > 0 {
			res.strategy.ClusterPermissions = append(res.strategy.ClusterPermissions,
				operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: sa, Rules: cluster})
		}
		if len(namespaced) > 0 {
			res.strategy.Permissions = append(res.strategy.Permissions,
				operatorsv1alpha1.StrategyDeploymentPermissions{ServiceAccountName: sa, Rules: namespaced})
		}
		res.dropped = append(res.dropped, "ServiceAccount/"+sa+": created by OLM from the CSV permissions")
	}
	leftover, consumed := rbac.leftover()
	res.dropped = append(res.dropped, consumed...)
	for _, u := range leftover {
		if k := u.GetKind(); k == kindClusterRole || k == kindClusterRoleBinding {
			res.dropped = append(res.dropped, k+"/"+u.GetName()+clusterRBACOutlivesCSV)
			continue
		}
		res.extra = append(res.extra, u)
	}

	hooks, webhookServices, err := webhookDefinitions(dep.Name, mutating, validating, services)
	if err != nil {
		return nil, err
	}
	res.webhooks = hooks
	for _, m := range mutating {
		res.dropped = append(res.dropped, "MutatingWebhookConfiguration/"+m.Name+becameWebhooks)
	}
	for _, v := range validating {
		res.dropped = append(res.dropped, "ValidatingWebhookConfiguration/"+v.Name+becameWebhooks)
	}

	slices.SortStableFunc(rest, byFileName)
	for _, u := range rest {
		kind, name := u.GetKind(), u.GetName()
		switch {
		case kind == kindService && webhookServices[name]:
			res.dropped = append(res.dropped, "Service/"+name+": OLM creates the webhook Service of the Deployment")
		case kind == "Secret" && removedSecrets[name]:
			res.dropped = append(res.dropped, "Secret/"+name+": self-managed certificate; OLM provides the certificate")
		case !supportedKinds[kind]:
			res.dropped = append(res.dropped, kind+"/"+name+": not a kind OLM installs from a bundle")
		default:
			c := u.DeepCopy()
			c.SetNamespace("")
			res.extra = append(res.extra, c)
		}
	}
	return res, nil
}

// olmize adapts the manager Deployment to OLM: OLM's certificate instead of the self-managed
// one (whose volume would collide with OLM's mount), the bundle's images. It returns the
// self-managed certificate Secrets: the one named by --webhook-cert-secret, and those of
// removed Secret volumes.
func olmize(d *appsv1.Deployment, o Options) map[string]bool {
	removed := map[string]bool{}
	spec := &d.Spec.Template.Spec
	dropVolumes := map[string]bool{}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if c.Name != "manager" {
			continue
		}
		c.Image = o.ManagerImage
		if secret, ok := argValue(c.Args, "--webhook-cert-secret"); ok {
			removed[secret] = true
			c.Args = dropArg(c.Args, "--webhook-cert-secret")
		}
		c.Args = setArg(c.Args, "--cert-mode", "olm")
		var mounts []corev1.VolumeMount
		for _, m := range c.VolumeMounts {
			if m.MountPath == OLMCertDir {
				dropVolumes[m.Name] = true
				continue
			}
			mounts = append(mounts, m)
		}
		c.VolumeMounts = mounts
		c.Env = setEnv(c.Env, "RELATED_IMAGE_DAEMON", o.DaemonImage)
	}
	var volumes []corev1.Volume
	for _, v := range spec.Volumes {
		if dropVolumes[v.Name] {
			if v.Secret != nil {
				removed[v.Secret.SecretName] = true
			}
			continue
		}
		volumes = append(volumes, v)
	}
	spec.Volumes = volumes
	return removed
}

// setArg sets --name=value, replacing an existing --name=... or --name value.
func setArg(args []string, name, value string) []string {
	return append(dropArg(args, name), name+"="+value)
}

// argValue returns the value of --name=value or --name value.
func argValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
		if a == name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// dropArg removes --name=... and --name value.
func dropArg(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == name {
			i++ // skip its value
			continue
		}
		if strings.HasPrefix(a, name+"=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

func setEnv(env []corev1.EnvVar, name, value string) []corev1.EnvVar {
	for i := range env {
		if env[i].Name == name {
			env[i] = corev1.EnvVar{Name: name, Value: value}
			return env
		}
	}
	return append(env, corev1.EnvVar{Name: name, Value: value})
}

// webhookDefinitions describes the webhooks for OLM, which creates the configurations, the
// Service and the certificate. OLM has no namespaceSelector in a webhook description (it sets
// one from the OperatorGroup): the manager's Pod webhook skips excluded namespaces itself.
func webhookDefinitions(deployment string, mutating []admissionv1.MutatingWebhookConfiguration,
	validating []admissionv1.ValidatingWebhookConfiguration, services map[string]*corev1.Service,
) ([]operatorsv1alpha1.WebhookDescription, map[string]bool, error) {
	used := map[string]bool{}
	var out []operatorsv1alpha1.WebhookDescription
	describe := func(typ operatorsv1alpha1.WebhookAdmissionType, name string, cc admissionv1.WebhookClientConfig,
	) (operatorsv1alpha1.WebhookDescription, error) {
		if cc.Service == nil {
			return operatorsv1alpha1.WebhookDescription{}, fmt.Errorf("webhook %s has no service reference", name)
		}
		svc, ok := services[cc.Service.Name]
		if !ok || len(svc.Spec.Ports) == 0 {
			return operatorsv1alpha1.WebhookDescription{}, fmt.Errorf("webhook %s: Service %s not found", name, cc.Service.Name)
		}
		used[svc.Name] = true
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		target := intstr.FromInt32(port)
		for _, p := range svc.Spec.Ports {
			if p.Port == port {
				target = p.TargetPort
			}
		}
		return operatorsv1alpha1.WebhookDescription{
			GenerateName: name, Type: typ, DeploymentName: deployment,
			ContainerPort: port, TargetPort: &target, WebhookPath: cc.Service.Path,
		}, nil
	}
	for _, cfg := range mutating {
		for _, w := range cfg.Webhooks {
			d, err := describe(operatorsv1alpha1.MutatingAdmissionWebhook, w.Name, w.ClientConfig)
			if err != nil {
				return nil, nil, err
			}
			d.Rules, d.FailurePolicy, d.MatchPolicy = w.Rules, w.FailurePolicy, w.MatchPolicy
			d.ObjectSelector, d.SideEffects, d.TimeoutSeconds = w.ObjectSelector, w.SideEffects, w.TimeoutSeconds
			d.AdmissionReviewVersions, d.ReinvocationPolicy = w.AdmissionReviewVersions, w.ReinvocationPolicy
			out = append(out, d)
		}
	}
	for _, cfg := range validating {
		for _, w := range cfg.Webhooks {
			d, err := describe(operatorsv1alpha1.ValidatingAdmissionWebhook, w.Name, w.ClientConfig)
			if err != nil {
				return nil, nil, err
			}
			d.Rules, d.FailurePolicy, d.MatchPolicy = w.Rules, w.FailurePolicy, w.MatchPolicy
			d.ObjectSelector, d.SideEffects, d.TimeoutSeconds = w.ObjectSelector, w.SideEffects, w.TimeoutSeconds
			d.AdmissionReviewVersions = w.AdmissionReviewVersions
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b operatorsv1alpha1.WebhookDescription) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.GenerateName, b.GenerateName))
	})
	return out, used, nil
}

func byFileName(a, b *unstructured.Unstructured) int {
	return cmp.Compare(manifestFileName(a), manifestFileName(b))
}

// manifestFileName names a bundle manifest the way bundles conventionally do.
func manifestFileName(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	if gvk.Kind == kindCRD {
		plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		return group + "_" + plural + ".yaml"
	}
	gv := gvk.Version
	if gvk.Group != "" {
		gv = gvk.Group + "_" + gvk.Version
	}
	return strings.ToLower(u.GetName() + "_" + gv + "_" + gvk.Kind + ".yaml")
}
