//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

const (
	appContainer = "app"
	// daemonReporter is the reporting controller of the node daemon's events.
	daemonReporter = "enhanced-liveness-daemon"
)

var specNamespaces []string

// newNamespace creates a namespace for one spec and deletes it when the spec ends.
func newNamespace(prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + prefix + "-"}}
	Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	specNamespaces = append(specNamespaces, ns.Name)
	DeferCleanup(func(ctx context.Context) {
		_ = k8s.Delete(ctx, ns)
	})
	return ns.Name
}

// app describes a Deployment of the test application.
type app struct {
	name     string
	replicas int32
	probe    *corev1.Probe
	enrolled bool // the opt-in annotation on the pod template
	// stickySickness keeps the health file on an emptyDir, so a restart does not heal the pod.
	stickySickness bool
	annotations    map[string]string
	// sidecars run beside the app container.
	sidecars []corev1.Container
	// node pins the pods to one node (nodeSelector kubernetes.io/hostname); "" lets the scheduler
	// place them.
	node string
	// spread spreads the replicas evenly over the nodes (a topology spread constraint on
	// kubernetes.io/hostname, maxSkew 1).
	spread bool
	// noWait: deployApp returns once the Deployment is created, not waiting for its replicas (a
	// probe that fails from the start on one node may never let them all be available).
	noWait bool
	// hostNetworkPort, when not 0, runs the pods in their node's network (hostNetwork) with the
	// app listening there on this port (HTTP), the next (TCP) and the one after (gRPC): ports no
	// other host-network process of the node uses.
	hostNetworkPort int32
	// ready gives the app a readiness probe on /admin/state, which it answers while it is sick:
	// the pod is Ready once the app serves, not as soon as its process runs. The budget counts a
	// restarted pod available from then, which is when the app's STARTED line is already written
	// (the log-based down time of the budget specs).
	ready bool
}

// readiness is the app's readiness probe when ready is set, else none.
func readiness(ready bool, port int32) *corev1.Probe {
	if !ready {
		return nil
	}
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/admin/state", Port: intstr.FromInt32(port)}},
		PeriodSeconds: 1, FailureThreshold: 1, TimeoutSeconds: 1, SuccessThreshold: 1}
}

func probeWith(h corev1.ProbeHandler) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: h, PeriodSeconds: 1, FailureThreshold: 3, TimeoutSeconds: 1, SuccessThreshold: 1}
}

func httpProbe() *corev1.Probe {
	return probeWith(corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}})
}
func tcpProbe() *corev1.Probe {
	return probeWith(corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8081)}})
}
func grpcProbe() *corev1.Probe {
	return probeWith(corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 8082}})
}
func execProbe(args ...string) *corev1.Probe {
	return probeWith(corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: append([]string{"/app", "check"}, args...)}})
}

// deployApp creates the Deployment and waits until all its replicas are available.
func deployApp(ns string, a app) *appsv1.Deployment {
	labels := map[string]string{"app": a.name}
	ann := maps.Clone(a.annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	if a.enrolled {
		ann[appsv1alpha1.AnnotationEnabled] = appsv1alpha1.TrueValue
	}
	port := int32(8080)
	if a.hostNetworkPort != 0 {
		port = a.hostNetworkPort
	}
	c := corev1.Container{
		Name: appContainer, Image: appImage, ImagePullPolicy: corev1.PullNever,
		LivenessProbe:  a.probe,
		ReadinessProbe: readiness(a.ready, port),
		// The node, for a check that fails on one node only (/app check -sick-on-node).
		Env: []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
		// On the node's network these are host ports too: the scheduler keeps two pods of one
		// node from taking the same.
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: port}, {Name: "tcp", ContainerPort: port + 1},
			{Name: "grpc", ContainerPort: port + 2}},
	}
	if a.hostNetworkPort != 0 {
		c.Env = append(c.Env, corev1.EnvVar{Name: "HTTP_PORT", Value: strconv.Itoa(int(port))},
			corev1.EnvVar{Name: "TCP_PORT", Value: strconv.Itoa(int(port + 1))},
			corev1.EnvVar{Name: "GRPC_PORT", Value: strconv.Itoa(int(port + 2))})
	}
	var volumes []corev1.Volume
	if a.stickySickness {
		c.Env = append(c.Env, corev1.EnvVar{Name: "HEALTH_FILE", Value: "/health/sick"})
		c.VolumeMounts = []corev1.VolumeMount{{Name: "health", MountPath: "/health"}}
		volumes = []corev1.Volume{{Name: "health",
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(a.replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: ann},
				Spec: corev1.PodSpec{
					Containers: append([]corev1.Container{c}, a.sidecars...), Volumes: volumes,
					TerminationGracePeriodSeconds: ptr.To[int64](2),
					HostNetwork:                   a.hostNetworkPort != 0,
				},
			},
		},
	}
	if a.node != "" {
		d.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelHostname: a.node}
	}
	if a.spread {
		d.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1,
			TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}}
	}
	Expect(k8s.Create(context.Background(), d)).To(Succeed())
	if a.noWait {
		return d
	}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(d), d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.AvailableReplicas).To(Equal(a.replicas))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(a.replicas))
		g.Expect(appPods(ns, a.name)).To(HaveLen(int(a.replicas)))
	}).WithTimeout(90*time.Second).Should(Succeed(), "deployment %s/%s available", ns, a.name)
	return d
}

// appPods are the running, not terminating pods of the app, by name.
func appPods(ns, name string) []corev1.Pod {
	var list corev1.PodList
	Expect(k8s.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{"app": name})).To(Succeed())
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			out = append(out, p)
		}
	}
	return out
}

func onlyPod(ns, name string) corev1.Pod {
	pods := appPods(ns, name)
	Expect(pods).To(HaveLen(1))
	return pods[0]
}

func getPod(ns, name string) *corev1.Pod {
	p := &corev1.Pod{}
	Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p)).To(Succeed())
	return p
}

func containerStatus(p *corev1.Pod, name string) corev1.ContainerStatus {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == name {
			return s
		}
	}
	return corev1.ContainerStatus{}
}

// restartCount is a poll function for Eventually/Consistently.
func restartCount(ns, pod string) func() int32 {
	return func() int32 { return containerStatus(getPod(ns, pod), appContainer).RestartCount }
}

// appHTTPPort is the port the pod's app serves HTTP on (its container port "http").
func appHTTPPort(p *corev1.Pod) int32 {
	for _, c := range p.Spec.Containers {
		if c.Name != appContainer {
			continue
		}
		for _, cp := range c.Ports {
			if cp.Name == "http" {
				return cp.ContainerPort
			}
		}
	}
	return 8080
}

// setSick switches the app's health through its admin endpoint (the pod IP is on the node's
// bridge, or for a host-network pod the node's address, reachable from this host).
func setSick(p corev1.Pod, sick bool) {
	path := "/admin/healthy"
	if sick {
		path = "/admin/sick"
	}
	hc := &http.Client{Timeout: 3 * time.Second}
	Eventually(func() error {
		resp, err := hc.Post(fmt.Sprintf("http://%s%s", net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(appHTTPPort(&p)))), path),
			"text/plain", nil)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("%s: %s", resp.Status, b)
		}
		return nil
	}).WithTimeout(15*time.Second).Should(Succeed(), "switch %s sick=%t", p.Name, sick)
}

// crrsOfPod lists the CRRs in ns for the pod (by its UID label, set by the CRR webhook).
func crrsOfPod(ns string, uid string) []appsv1alpha1.ContainerRecreateRequest {
	var list appsv1alpha1.ContainerRecreateRequestList
	Expect(k8s.List(context.Background(), &list, client.InNamespace(ns),
		client.MatchingLabels{appsv1alpha1.LabelCRRPodUID: uid})).To(Succeed())
	return list.Items
}

func crrsIn(ns string) []appsv1alpha1.ContainerRecreateRequest {
	var list appsv1alpha1.ContainerRecreateRequestList
	Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	return list.Items
}

// eventsAbout lists the events whose regarding object is name in ns (events.k8s.io/v1 also
// shows the core/v1 events the kubelet writes).
func eventsAbout(ns, name string) []eventsv1.Event {
	var list eventsv1.EventList
	Expect(k8s.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func reporterOf(e eventsv1.Event) string {
	if e.ReportingController != "" {
		return e.ReportingController
	}
	return e.DeprecatedSource.Component
}

// hasEvent: an event about name with this reason, from this reporter ("" = any), whose note
// contains noteSubstr.
func hasEvent(ns, name, reason, reporter, noteSubstr string) func() bool {
	return func() bool {
		for _, e := range eventsAbout(ns, name) {
			if e.Reason == reason && (reporter == "" || reporterOf(e) == reporter) && strings.Contains(e.Note, noteSubstr) {
				return true
			}
		}
		return false
	}
}

// managerDeployment is the operator's manager Deployment in the operator namespace.
func managerDeployment() *appsv1.Deployment {
	var list appsv1.DeploymentList
	Expect(k8s.List(context.Background(), &list, client.InNamespace(operatorNS),
		client.MatchingLabels{"control-plane": "controller-manager"})).To(Succeed())
	Expect(list.Items).To(HaveLen(1), "one manager Deployment in %s", operatorNS)
	return &list.Items[0]
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func clientKey(o client.Object) client.ObjectKey { return client.ObjectKeyFromObject(o) }

func clientInNamespace(ns string) client.InNamespace { return client.InNamespace(ns) }
