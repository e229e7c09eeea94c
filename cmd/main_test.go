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
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// The manager binary, built from this package and run against envtest's kube-apiserver with the
// pod webhook registered, as an install with --operator-namespace and no POD_NAMESPACE: the pod
// webhook must skip that namespace, as the controllers treat it as the operator's, and enroll
// pods elsewhere. It also shows that the manager starts and becomes ready from main, and that its
// clients measure the API server's clock (newManager's restConfig.Wrap): with the clock unmeasured
// the webhook leaves every pod native, and no pod would be enrolled.
func TestManagerBinaryTakesTheOperatorNamespaceFromItsFlag(t *testing.T) {
	const opNS, appNS = "team-ops", "apps"
	env, c := testutil.StartEnvironment(t, "mpod-v1.kb.io")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, ns := range []string{opNS, appNS} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	wo := env.WebhookInstallOptions
	healthAddr := startManagerBinary(ctx, t, env, buildManager(ctx, t, ""), "--operator-namespace="+opNS,
		"--cert-mode=olm", "--webhook-cert-path="+wo.LocalServingCertDir, fmt.Sprintf("--webhook-port=%d", wo.LocalServingPort))
	waitReady(ctx, t, healthAddr)

	enrolled := func(ns string) bool {
		t.Helper()
		pod := testutil.NewPod(ns, "web").Annotations(map[string]string{appsv1alpha1.AnnotationEnabled: "true"}).
			LivenessProbe("app", &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}}).Build()
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		return pod.Labels[appsv1alpha1.LabelEnrolled] == appsv1alpha1.TrueValue
	}
	// The webhook is up and enrolls: otherwise the next check would pass for nothing.
	if !enrolled(appNS) {
		t.Fatalf("a pod in %s that opted in was not enrolled", appNS)
	}
	if enrolled(opNS) {
		t.Errorf("a pod in the operator namespace %s (--operator-namespace) was enrolled", opNS)
	}
}

// buildManager builds the manager binary, linked with ldflags, and returns its path.
func buildManager(ctx context.Context, t *testing.T, ldflags string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "manager")
	build := exec.CommandContext(ctx, "go", "build", "-ldflags", ldflags, "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	return bin
}

// startManagerBinary runs the manager binary bin against env with args added to flags every run
// needs; it returns the address of its health endpoint. The process is stopped with t.
func startManagerBinary(ctx context.Context, t *testing.T, env *envtest.Environment, bin string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	user, err := env.AddUser(envtest.User{Name: "manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	healthAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, append([]string{"--kubeconfig=" + kcPath, "--health-probe-bind-address=" + healthAddr,
		"--metrics-bind-address=0", "--leader-elect=false", "--manager-deployment=",
		"--daemon-image=registry.example/enhanced-liveness-daemon:test"}, args...)...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "POD_NAMESPACE=") && !strings.HasPrefix(e, "ENABLE_WEBHOOKS=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	log, err := os.Create(filepath.Join(dir, "manager.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("manager log:\n%s", out)
		}
		_ = log.Close()
	})
	return healthAddr
}

// waitReady polls the manager's /readyz until it answers 200: the signing key is loaded and the
// webhook server serves.
func waitReady(ctx context.Context, t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the manager did not become ready at %s: %v", addr, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
