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

// Package rbac reviews what every shipped role may write: the roles of config/rbac (the
// kustomize install) and the permissions of the bundle's ClusterServiceVersion (the OLM install).
// Each write is listed below with why it is there; a role that gains a write fails the test
// until the list (and the review it stands for) says so.
package rbac

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// writeVerbs are the verbs that change something (or grant more).
var writeVerbs = []string{"*", "create", "update", "patch", "delete", "deletecollection", "bind", "escalate", "impersonate"}

// Who may write what, one "group/resource[resourceNames]: verb" per line ("core" is the core
// group), by role (config/rbac, without the kustomize name prefix) and by the ServiceAccount
// whose CSV permissions carry them.
var (
	manager = []string{
		// probe mapping, CRR lifecycle, decisions
		"apps.enhancedliveness.io/containerrecreaterequests: create", "apps.enhancedliveness.io/containerrecreaterequests: delete",
		"apps.enhancedliveness.io/containerrecreaterequests: patch", "apps.enhancedliveness.io/containerrecreaterequests: update",
		"apps.enhancedliveness.io/containerrecreaterequests/status: patch", "apps.enhancedliveness.io/containerrecreaterequests/status: update",
		"apps.enhancedliveness.io/nodepodprobes: create", "apps.enhancedliveness.io/nodepodprobes: delete",
		"apps.enhancedliveness.io/nodepodprobes: patch", "apps.enhancedliveness.io/nodepodprobes: update",
		// each NodePodProbe's report, created empty (the daemon writes its status)
		"apps.enhancedliveness.io/nodepodprobereports: create",
		// the Mapped condition of a NodePodProbe the API server refused
		"apps.enhancedliveness.io/nodepodprobes/status: patch",
		"policy.enhancedliveness.io/enhancedlivenesspolicies/status: patch", "policy.enhancedliveness.io/enhancedlivenesspolicies/status: update",
		// the records of held restarts (only the manager writes them: the restart-holds policy)
		"policy.enhancedliveness.io/restartholds: create", "policy.enhancedliveness.io/restartholds: delete",
		"policy.enhancedliveness.io/restartholds: update",
		"events.k8s.io/events: create", "events.k8s.io/events: patch", "events.k8s.io/events: update",
		// the seal on enrolled pods (one annotation; the immutability policy exempts the manager only)
		"core/pods: patch",
		// the EnhancedLivenessNodeStorm condition of a Node (one condition, by strategic merge)
		"core/nodes/status: patch",
		// moving a pod whose restarts do not help where it is (restartEffectiveness.action Evict),
		// through the Eviction API so that PodDisruptionBudgets apply
		"core/pods/eviction: create",
		// the admission policies and the webhook configurations' caBundle, by name only
		"admissionregistration.k8s.io/validatingadmissionpolicies[enhanced-liveness-operator-daemon-node-scope,enhanced-liveness-operator-pod-probe-immutable,enhanced-liveness-operator-restart-holds]: create",
		"admissionregistration.k8s.io/validatingadmissionpolicies[enhanced-liveness-operator-daemon-node-scope,enhanced-liveness-operator-pod-probe-immutable,enhanced-liveness-operator-restart-holds]: patch",
		"admissionregistration.k8s.io/validatingadmissionpolicies[enhanced-liveness-operator-daemon-node-scope,enhanced-liveness-operator-pod-probe-immutable,enhanced-liveness-operator-restart-holds]: update",
		"admissionregistration.k8s.io/validatingadmissionpolicybindings[enhanced-liveness-operator-daemon-node-scope,enhanced-liveness-operator-pod-probe-immutable,enhanced-liveness-operator-restart-holds]: create",
		"admissionregistration.k8s.io/validatingadmissionpolicybindings[enhanced-liveness-operator-daemon-node-scope,enhanced-liveness-operator-pod-probe-immutable,enhanced-liveness-operator-restart-holds]: patch",
		"admissionregistration.k8s.io/validatingadmissionpolicybindings[enhanced-liveness-operator-daemon-node-scope,enhanced-liveness-operator-pod-probe-immutable,enhanced-liveness-operator-restart-holds]: update",
		"admissionregistration.k8s.io/mutatingwebhookconfigurations[enhanced-liveness-operator-mutating-webhook-configuration]: update",
		"admissionregistration.k8s.io/validatingwebhookconfigurations[enhanced-liveness-operator-validating-webhook-configuration]: update",
		// its own identity (SelfSubjectReview)
		"authentication.k8s.io/selfsubjectreviews: create",
	}
	// In the operator namespace: the signing-key Secret, the trust ConfigMap, the webhook
	// certificate Secret, the daemon DaemonSet, and the PrometheusRule and ServiceMonitor
	// (updated by name only).
	managerNamespaced = []string{
		"core/configmaps: create", "core/configmaps: update", "core/secrets: create", "core/secrets: update",
		"apps/daemonsets: create", "apps/daemonsets: delete", "apps/daemonsets: patch", "apps/daemonsets: update",
		"monitoring.coreos.com/prometheusrules: create", "monitoring.coreos.com/servicemonitors: create",
		"monitoring.coreos.com/prometheusrules[enhanced-liveness-operator-alerts,enhanced-liveness-operator-controller-manager-metrics-monitor]: update",
		"monitoring.coreos.com/servicemonitors[enhanced-liveness-operator-alerts,enhanced-liveness-operator-controller-manager-metrics-monitor]: update",
	}
	leaderElection = []string{
		"coordination.k8s.io/leases: create", "coordination.k8s.io/leases: delete", "coordination.k8s.io/leases: patch",
		"coordination.k8s.io/leases: update", "core/events: create", "core/events: patch",
	}
	// The daemon writes only status, events and its Lease; the node-scope admission policy holds
	// every one of those writes to its own node.
	daemon = []string{
		"apps.enhancedliveness.io/containerrecreaterequests/status: patch", "apps.enhancedliveness.io/containerrecreaterequests/status: update",
		"apps.enhancedliveness.io/nodepodprobereports/status: patch", "apps.enhancedliveness.io/nodepodprobereports/status: update",
		"core/events: create", "core/events: patch", "events.k8s.io/events: create", "events.k8s.io/events: patch",
	}
	daemonLease   = []string{"coordination.k8s.io/leases: create", "coordination.k8s.io/leases: update"}
	metricsAuth   = []string{"authentication.k8s.io/tokenreviews: create", "authorization.k8s.io/subjectaccessreviews: create"}
	policyAdmin   = []string{"policy.enhancedliveness.io/enhancedlivenesspolicies: *"}
	policyEditor  = crud("policy.enhancedliveness.io/enhancedlivenesspolicies")
	crrAdmin      = []string{"apps.enhancedliveness.io/containerrecreaterequests: *"}
	crrEditor     = crud("apps.enhancedliveness.io/containerrecreaterequests")
	shippedWrites = map[string][]string{
		"ClusterRole/manager-role": manager, "Role/manager-role": managerNamespaced,
		"Role/leader-election-role": leaderElection,
		"ClusterRole/daemon-role":   daemon, "Role/daemon-lease-role": daemonLease, "Role/daemon-trust-role": nil,
		"ClusterRole/metrics-auth-role": metricsAuth, "ClusterRole/metrics-reader": nil,
		// For people (aggregated into admin/edit/view): a ContainerRecreateRequest is a general
		// API (a restart by hand); NodePodProbes and RestartHolds can only be viewed.
		"ClusterRole/policy-enhancedlivenesspolicy-admin-role": policyAdmin, "ClusterRole/policy-enhancedlivenesspolicy-editor-role": policyEditor,
		"ClusterRole/policy-enhancedlivenesspolicy-viewer-role": nil,
		"ClusterRole/apps-containerrecreaterequest-admin-role":  crrAdmin, "ClusterRole/apps-containerrecreaterequest-editor-role": crrEditor,
		"ClusterRole/apps-containerrecreaterequest-viewer-role": nil,
		"ClusterRole/apps-nodepodprobe-viewer-role":             nil,
		"ClusterRole/policy-restarthold-viewer-role":            nil,
	}
	// The CSV: cluster permissions and namespaced permissions, by ServiceAccount.
	csvClusterWrites = map[string][]string{
		"enhanced-liveness-operator-controller-manager": append(slices.Clone(manager), metricsAuth...),
		"enhanced-liveness-operator-daemon":             append(slices.Clone(daemon), metricsAuth...),
	}
	csvNamespacedWrites = map[string][]string{
		"enhanced-liveness-operator-controller-manager": append(slices.Clone(managerNamespaced), leaderElection...),
		"enhanced-liveness-operator-daemon":             daemonLease,
	}
)

func crud(resource string) []string {
	return []string{resource + ": create", resource + ": delete", resource + ": patch", resource + ": update"}
}

// writes lists the writes a set of rules grants, sorted and without duplicates.
func writes(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			if g == "" {
				g = "core"
			}
			for _, res := range r.Resources {
				names := ""
				if len(r.ResourceNames) > 0 {
					n := slices.Clone(r.ResourceNames)
					slices.Sort(n)
					names = "[" + strings.Join(n, ",") + "]"
				}
				for _, v := range r.Verbs {
					if slices.Contains(writeVerbs, v) {
						out = append(out, g+"/"+res+names+": "+v)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sorted(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// diff says what got has beyond want and what it lacks.
func diff(got, want []string) string {
	var b strings.Builder
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "\n  unexpected write: %s", g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "\n  no longer granted (update the review): %s", w)
		}
	}
	return b.String()
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "..", "..")
}

// shippedRole is a Role or ClusterRole under config/rbac.
type shippedRole struct {
	Rules  []rbacv1.PolicyRule
	Labels map[string]string
}

// shippedRoles reads every Role and ClusterRole under config/rbac.
func shippedRoles(t *testing.T) map[string]shippedRole {
	t.Helper()
	out := map[string]shippedRole{}
	err := filepath.WalkDir(filepath.Join(root(t), "config", "rbac"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || d.Name() == "kustomization.yaml" {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			var obj struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name   string            `json:"name"`
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
				Rules []rbacv1.PolicyRule `json:"rules"`
			}
			if err := dec.Decode(&obj); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return fmt.Errorf("%s: %w", path, err)
			}
			if obj.Kind == "Role" || obj.Kind == "ClusterRole" {
				key := obj.Kind + "/" + obj.Metadata.Name
				out[key] = shippedRole{Rules: append(out[key].Rules, obj.Rules...), Labels: obj.Metadata.Labels}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEveryShippedRoleWritesOnlyWhatItIsReviewedFor(t *testing.T) {
	roles := shippedRoles(t)
	for name := range roles {
		if _, ok := shippedWrites[name]; !ok {
			t.Errorf("%s is not reviewed: add it to shippedWrites with the writes it needs", name)
		}
	}
	for name, want := range shippedWrites {
		role, ok := roles[name]
		if !ok {
			t.Errorf("%s is reviewed but no longer shipped", name)
			continue
		}
		if d := diff(writes(role.Rules), sorted(want)); d != "" {
			t.Errorf("%s:%s", name, d)
		}
	}
}

func TestNoShippedRoleLetsAPersonWriteNodePodProbes(t *testing.T) {
	for name, role := range shippedRoles(t) {
		if strings.Contains(name, "manager-role") || strings.Contains(name, "daemon-role") {
			continue
		}
		for _, w := range writes(role.Rules) {
			if strings.HasPrefix(w, "apps.enhancedliveness.io/nodepodprobes") || strings.HasPrefix(w, "apps.enhancedliveness.io/*") ||
				strings.HasPrefix(w, "*/") {
				t.Errorf("%s grants %s: anyone bound to it could change what the node daemons are told to run, "+
					"or what they report", name, w)
			}
		}
	}
}

// The roles for people are aggregated into the cluster's admin, edit and view roles, so that a
// namespace's users can use the operator's APIs as they use the built-in ones. The NodePodProbe
// viewer is not: NodePodProbes are cluster-scoped and name the pods of every namespace.
func TestTheRolesForPeopleAreAggregated(t *testing.T) {
	want := map[string]string{
		"ClusterRole/policy-enhancedlivenesspolicy-admin-role":  "admin",
		"ClusterRole/policy-enhancedlivenesspolicy-editor-role": "edit",
		"ClusterRole/policy-enhancedlivenesspolicy-viewer-role": "view",
		"ClusterRole/apps-containerrecreaterequest-admin-role":  "admin",
		"ClusterRole/apps-containerrecreaterequest-editor-role": "edit",
		"ClusterRole/apps-containerrecreaterequest-viewer-role": "view",
		"ClusterRole/policy-restarthold-viewer-role":            "view",
		"ClusterRole/apps-nodepodprobe-viewer-role":             "",
	}
	roles := shippedRoles(t)
	for name, to := range want {
		role, ok := roles[name]
		if !ok {
			t.Errorf("%s is no longer shipped", name)
			continue
		}
		for _, agg := range []string{"admin", "edit", "view"} {
			label := "rbac.authorization.k8s.io/aggregate-to-" + agg
			if got, should := role.Labels[label] == "true", agg == to; got != should {
				t.Errorf("%s: label %s=true is %t, want %t", name, label, got, should)
			}
		}
	}
}

func TestTheBundlesPermissionsWriteOnlyWhatTheyAreReviewedFor(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root(t), "bundle", "manifests", "enhanced-liveness-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := yaml.Unmarshal(raw, csv); err != nil {
		t.Fatal(err)
	}
	check := func(kind string, perms []operatorsv1alpha1.StrategyDeploymentPermissions, want map[string][]string) {
		seen := map[string]bool{}
		for _, p := range perms {
			seen[p.ServiceAccountName] = true
			w, ok := want[p.ServiceAccountName]
			if !ok {
				t.Errorf("%s of ServiceAccount %s are not reviewed", kind, p.ServiceAccountName)
				continue
			}
			if d := diff(writes(p.Rules), sorted(w)); d != "" {
				t.Errorf("%s of %s:%s", kind, p.ServiceAccountName, d)
			}
		}
		for sa := range want {
			if !seen[sa] {
				t.Errorf("%s of %s are reviewed but not in the CSV", kind, sa)
			}
		}
	}
	check("clusterPermissions", csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions, csvClusterWrites)
	check("permissions", csv.Spec.InstallStrategy.StrategySpec.Permissions, csvNamespacedWrites)
}
