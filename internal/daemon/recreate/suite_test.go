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

package recreate

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/wiring"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// The envtest suite runs the executor in a manager whose cache is limited to one node, as the
// daemon's is, against a real kube-apiserver and the test CRI server. A fake kubelet answers each
// StopContainer by starting a new container instance and reporting it in pod status through the API.

const envNode = "node-a"

var (
	suite     *testutil.Suite
	envCtx    context.Context
	k8sClient client.WithWatch
	criServer *critest.Server
	kubelet   *fakeKubelet
	stopMgr   func()
)

func TestExecutorEnvtest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "CRR executor envtest suite")
}

var _ = BeforeSuite(func() {
	suite = testutil.StartSuite(testutil.SuiteOptions{})
	envCtx = suite.Ctx
	var err error
	// The fake kubelet watches pods.
	k8sClient, err = client.NewWithWatch(suite.Config, client.Options{Scheme: testutil.Scheme()})
	Expect(err).NotTo(HaveOccurred())

	srv := &critest.Server{}
	criServer = srv
	kubelet = newFakeKubelet(k8sClient, srv) // sets the server's StopFunc, before it serves
	dir, err := os.MkdirTemp("", "rce")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = os.RemoveAll(dir) })
	ep, err := srv.Start(dir)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(srv.Close)
	rt, err := cri.Connect(envCtx, ep, 5*time.Second)
	Expect(err).NotTo(HaveOccurred())

	go kubelet.run(envCtx)

	// The daemon's own cache restriction: only this node's pods and requests are seen.
	opts := ctrl.Options{Cache: wiring.CacheOptions(envNode, appsv1alpha1.DefaultOperatorNamespace)}
	stopMgr, err = testutil.StartManager(envCtx, suite.Config, opts, func(mgr ctrl.Manager) error {
		return (&Executor{Runtime: rt, NodeName: envNode, PollInterval: time.Second}).SetupWithManager(mgr)
	})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if stopMgr != nil {
		stopMgr()
	}
	suite.Stop()
})

// fakeKubelet restarts stopped containers the way the kubelet does: a new CRI instance, and pod
// status updated through the API. Hold keeps stopped containers down until Release.
type fakeKubelet struct {
	c       client.Client
	srv     *critest.Server
	stopped chan string

	mu      sync.Mutex
	owners  map[string]types.NamespacedName // CRI container ID -> pod
	held    bool
	waiting []string
}

func newFakeKubelet(c client.Client, srv *critest.Server) *fakeKubelet {
	k := &fakeKubelet{c: c, srv: srv, stopped: make(chan string, 100), owners: map[string]types.NamespacedName{}}
	srv.StopFunc = func(id string, _ int64) error {
		k.stopped <- id
		return nil
	}
	return k
}

func (k *fakeKubelet) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-k.stopped:
			k.mu.Lock()
			if k.held {
				k.waiting = append(k.waiting, id)
				k.mu.Unlock()
				continue
			}
			k.mu.Unlock()
			k.restart(ctx, id)
		}
	}
}

// Hold keeps stopped containers down; Release restarts them.
func (k *fakeKubelet) Hold() {
	k.mu.Lock()
	k.held = true
	k.mu.Unlock()
}

func (k *fakeKubelet) Release(ctx context.Context) {
	k.mu.Lock()
	k.held = false
	ids := k.waiting
	k.waiting = nil
	k.mu.Unlock()
	for _, id := range ids {
		k.restart(ctx, id)
	}
}

// StartPod creates a running pod on node with one CRI container per name and reports them in
// pod status. It returns the pod with its status.
func (k *fakeKubelet) StartPod(ctx context.Context, namespace, name, node string, containers ...string) *corev1.Pod {
	b := testutil.NewPod(namespace, name).OnNode(node).Containers(containers...)
	p := b.Build()
	Expect(k.c.Create(ctx, p)).To(Succeed())
	b.Running("127.0.0.1")
	for _, c := range containers {
		id := k.srv.AddContainer(string(p.UID), c)
		k.mu.Lock()
		k.owners[id] = client.ObjectKeyFromObject(p)
		k.mu.Unlock()
		b.ContainerID(c, "critest://"+id)
	}
	status := b.With(func(bp *corev1.Pod) { bp.UID = p.UID }).Build().Status
	p.Status = status
	Expect(k.c.Status().Update(ctx, p)).To(Succeed())
	return p
}

func (k *fakeKubelet) restart(ctx context.Context, oldID string) {
	defer GinkgoRecover()
	k.mu.Lock()
	key, ok := k.owners[oldID]
	k.mu.Unlock()
	if !ok {
		return
	}
	newID, err := k.srv.Restart(oldID)
	Expect(err).NotTo(HaveOccurred())
	k.mu.Lock()
	k.owners[newID] = key
	k.mu.Unlock()
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := k.c.Get(ctx, key, p); err != nil {
			return err
		}
		for i := range p.Status.ContainerStatuses {
			s := &p.Status.ContainerStatuses[i]
			if s.ContainerID != "critest://"+oldID {
				continue
			}
			s.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "Error", ContainerID: s.ContainerID}}
			s.ContainerID, s.RestartCount = "critest://"+newID, s.RestartCount+1
			s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
			return k.c.Status().Update(ctx, p)
		}
		return fmt.Errorf("pod %s has no container %s", key, oldID)
	})
	Expect(err).NotTo(HaveOccurred())
}
