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

package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/plugin/explain"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// run runs the plugin as kubectl would, with kubeconfig, and returns its exit code and outputs.
func run(kubeconfig string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Main(ctx, append([]string{"--kubeconfig", kubeconfig}, args...),
		genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func writeKubeconfig(name string, content []byte) string {
	p := filepath.Join(GinkgoT().TempDir(), name)
	Expect(os.WriteFile(p, content, 0o600)).To(Succeed())
	return p
}

// bindViewer gives user the rights a namespace's viewer has: Kubernetes' view role (pods,
// events) and the operator's viewer roles, as the shipped roles aggregate them into view.
func bindViewer(ns, user string) {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets", "deployments"}, Verbs: []string{"get", "list", "watch"}},
	}
	for _, f := range []string{"policy_enhancedlivenesspolicy_viewer_role.yaml", "policy_restarthold_viewer_role.yaml",
		"apps_containerrecreaterequest_viewer_role.yaml"} {
		b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "config", "rbac", f))
		Expect(err).NotTo(HaveOccurred())
		role := &rbacv1.ClusterRole{}
		Expect(yaml.Unmarshal(b, role)).To(Succeed())
		rules = append(rules, role.Rules...)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "viewer"}, Rules: rules}
	Expect(k8sClient.Create(ctx, role)).To(Succeed())
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "viewer-" + user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}})).To(Succeed())
}

// createDeployment creates a Deployment and its ReplicaSet as the Deployment controller would
// (envtest runs no controller), and returns the ReplicaSet's UID.
func createDeployment(ns, name, rsName string) types.UID {
	labels := map[string]string{"app": name}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	Expect(k8sClient.Create(ctx, d)).To(Succeed())
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rsName,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: d.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	Expect(k8sClient.Create(ctx, rs)).To(Succeed())
	return rs.UID
}

var _ = Describe("kubectl enhancedliveness", Ordered, func() {
	const ns = "shop"
	var (
		alice, admin string
		pod          *corev1.Pod
		onset        time.Time
	)

	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		bindViewer(ns, "alice")
		alice = writeKubeconfig("alice", suite.UserKubeconfig("alice"))
		admin = writeKubeconfig("admin", suite.UserKubeconfig("admin", "system:masters"))

		probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3, SuccessThreshold: 1}
		pctx, err := probecontext.Encode([]probecontext.ContainerProbe{{Name: "app", LivenessProbe: probe}})
		Expect(err).NotTo(HaveOccurred())
		rsUID := createDeployment(ns, "web", "web-5d8f9")
		pod = testutil.NewPod(ns, "web-5d8f9-abcde").Enrolled().OnNode("node-a").
			Labels(map[string]string{appsv1alpha1.LabelMode: appsv1alpha1.ModeEnforce, "app": "web"}).
			Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: pctx}).
			ControlledBy("apps/v1", "ReplicaSet", "web-5d8f9", rsUID).Running("10.0.0.9").Create(ctx, k8sClient)

		onset = time.Now().Add(-90 * time.Second).Truncate(time.Second)
		pol := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
			Spec: policyv1alpha1.EnhancedLivenessPolicySpec{Mode: policyv1alpha1.ModeEnforce}}
		Expect(k8sClient.Create(ctx, pol)).To(Succeed())
		pol.Status.HeldPodsTotal = 1
		pol.Status.HeldPods = []policyv1alpha1.HeldPod{{Pod: pod.Name, Container: "app", Reason: policyv1alpha1.HoldFailureStorm, Since: metav1.NewTime(onset)}}
		Expect(k8sClient.Status().Update(ctx, pol)).To(Succeed())

		Expect(k8sClient.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held-1"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name, UID: pod.UID, FieldPath: "spec.containers{app}"},
			Reason:         "RestartHeld", Action: "FailureStorm", Type: corev1.EventTypeWarning,
			Message:   "FailureStorm: 4 of 10 pods of Deployment web are failing, more than maxFailing 3 (policy shop/default) (probe web-5d8f9-abcde-app, container app, containerd://1)",
			EventTime: metav1.NewMicroTime(onset), ReportingController: "enhancedliveness.io/manager", ReportingInstance: "m"})).To(Succeed())

		report := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
		Expect(k8sClient.Create(ctx, report)).To(Succeed())
		report.Status.PodProbeStatuses = []appsv1alpha1.PodProbeStatus{{Name: pod.Name, Namespace: ns, UID: pod.UID,
			ProbeStates: []appsv1alpha1.ContainerProbeState{{Name: probecontext.ProbeName(pod.Name, "app"), State: appsv1alpha1.ProbeFailed,
				Message: "HTTP probe failed with statuscode: 500", LastProbeTime: metav1.NewTime(time.Now().Truncate(time.Second)),
				LastTransitionTime: metav1.NewTime(onset), FailingSince: &metav1.Time{Time: onset}}}}}
		Expect(k8sClient.Status().Update(ctx, report)).To(Succeed())
	})

	It("explains a held restart to a user who can read only the pod's namespace", func() {
		code, out, errOut := run(alice, "explain", pod.Name, "-n", ns)
		Expect(code).To(Equal(ExitOK), errOut)
		Expect(out).To(MatchRegexp(`Mode:\s+Enforce: admitted in Enforce mode`))
		Expect(out).To(MatchRegexp(`Probe:\s+http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=3`))
		Expect(out).To(ContainSubstring("restart held: FailureStorm (a doubt hold)"))
		Expect(out).To(MatchRegexp(`Rule:\s+4 of 10 pods of Deployment web are failing, more than maxFailing 3 \(policy shop/default\)\n`))
		Expect(out).To(MatchRegexp(`Ends when:\s+the count stays within maxFailing for --storm-settle-period, or a canary passes`))
		Expect(out).To(MatchRegexp(`Workload:\s+Deployment web\n`), "the walk goes up the ReplicaSet to its Deployment")
		Expect(out).To(ContainSubstring("the probe results of NodePodProbeReport node-a (cluster-scoped; the results shown come from the pod's events): forbidden to you"))
		Expect(out).NotTo(ContainSubstring("statuscode: 500"), "alice cannot read the node's report")
	})

	It("adds the node daemon's last result for a reader of the node's report, in JSON", func() {
		code, out, errOut := run(admin, "explain", pod.Name, "-n", ns, "-c", "app", "-o", "json")
		Expect(code).To(Equal(ExitOK), errOut)
		var x explain.Explanation
		Expect(json.Unmarshal([]byte(out), &x)).To(Succeed())
		Expect(x.Containers).To(HaveLen(1))
		c := x.Containers[0]
		Expect(c.State).To(Equal(explain.StateFailing))
		Expect(c.Results).NotTo(BeEmpty())
		Expect(c.Results[0].Message).To(Equal("HTTP probe failed with statuscode: 500"))
		Expect(c.Decision.Verdict).To(Equal(explain.VerdictHeld))
		Expect(c.Kubelet).To(HavePrefix("the kubelet would have restarted it at " + onset.UTC().Format(time.RFC3339)))
	})

	It("summarises the namespace for its reader, and refuses all namespaces to her", func() {
		code, out, errOut := run(alice, "status", "-n", ns)
		Expect(code).To(Equal(ExitOK), errOut)
		Expect(out).To(MatchRegexp(`shop\s+default\s+Enforce\s+0\s+0\s+0\s+0\s+1 \(FailureStorm 1\)`))
		Expect(out).To(MatchRegexp(`shop\s+web-5d8f9-abcde\s+app\s+FailureStorm`))

		code, _, errOut = run(alice, "status", "-A")
		Expect(code).To(Equal(ExitError))
		Expect(errOut).To(ContainSubstring("reading EnhancedLivenessPolicies"))
		Expect(errOut).To(ContainSubstring("forbidden"))
	})

	It("lists the nodes with the storm condition to a cluster reader", func() {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
		Expect(k8sClient.Create(ctx, node)).To(Succeed())
		node.Status.Conditions = []corev1.NodeCondition{{Type: "EnhancedLivenessNodeStorm", Status: corev1.ConditionTrue,
			Reason: "RestartsIneffective", Message: "restarts do not help for 3 namespaces", LastTransitionTime: metav1.Now()}}
		Expect(k8sClient.Status().Update(ctx, node)).To(Succeed())
		code, out, errOut := run(admin, "status", "-A", "-o", "yaml")
		Expect(code).To(Equal(ExitOK), errOut)
		Expect(out).To(ContainSubstring("storm: RestartsIneffective"))
		Expect(out).To(ContainSubstring("scope: all namespaces"))
	})

	It("says what is wrong with a missing pod or a bad command line, with kubectl's exit codes", func() {
		code, _, errOut := run(alice, "explain", "nope", "-n", ns)
		Expect(code).To(Equal(ExitError))
		Expect(errOut).To(ContainSubstring(`pod "nope" not found in namespace "shop"`))
		code, _, errOut = run(alice, "explain", pod.Name, "-n", ns, "-c", "sidecar")
		Expect(code).To(Equal(ExitError))
		Expect(errOut).To(ContainSubstring(`--container: pod web-5d8f9-abcde has no container "sidecar" with a liveness probe (it has [app])`))
		code, _, errOut = run(alice, "explain", pod.Name, "-o", "wide")
		Expect(code).To(Equal(ExitUsage))
		Expect(errOut).To(ContainSubstring(`--output: must be json or yaml`))
	})

	It("takes the rule from the policy's status once the pod's hold events are gone", func() {
		Expect(k8sClient.Delete(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held-1"}})).To(Succeed())
		rule := "3 of 3 pods of Deployment/web are failing, more than maxFailing 1 (policy shop/default)"
		pol := &policyv1alpha1.EnhancedLivenessPolicy{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, pol)).To(Succeed())
		pol.Status.HeldPods[0].Message = rule
		Expect(k8sClient.Status().Update(ctx, pol)).To(Succeed())

		code, out, errOut := run(alice, "explain", pod.Name, "-n", ns)
		Expect(code).To(Equal(ExitOK), errOut)
		Expect(out).To(ContainSubstring("restart held: FailureStorm (a doubt hold)"))
		Expect(out).To(MatchRegexp(`Rule:\s+3 of 3 pods of Deployment/web are failing, more than maxFailing 1 \(policy shop/default\)\n`))
		code, out, errOut = run(alice, "status", "-n", ns)
		Expect(code).To(Equal(ExitOK), errOut)
		Expect(out).To(MatchRegexp(`shop\s+web-5d8f9-abcde\s+app\s+FailureStorm\s+\S+\s+` + regexp.QuoteMeta(rule) + `\n`))
	})

	AfterAll(func() {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
	})
})
