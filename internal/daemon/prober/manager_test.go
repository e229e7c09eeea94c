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
package prober

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestWorker_6_OneWorkerPerPodContainerProbe(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &Manager{UserAgent: "kube-probe/1.37", Clock: f.clk}
	done := make(chan error)
	go func() { done <- m.Start(ctx) }()
	a := f.target(3)
	b := a
	b.Key.Probe = "second-probe-of-app"
	c := a
	c.PodUID = "uid-2"
	m.Sync([]Target{a, b, c, a}, []*corev1.Pod{f.pod})
	waitFor(t, func() bool { return m.WorkerCount() == 3 })
	m.Sync([]Target{a}, nil)
	if n := m.WorkerCount(); n != 1 {
		t.Errorf("after removing two probes: %d workers, want 1", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := m.WorkerCount(); n != 0 {
		t.Errorf("after stop: %d workers", n)
	}
}

func TestManager_NoWorkersAfterShutdownAndNoLeaks(t *testing.T) {
	f := newFixture(t)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{UserAgent: "kube-probe/1.37", Clock: f.clk}
	done := make(chan error)
	go func() { done <- m.Start(ctx) }()
	targets := make([]Target, 0, 100)
	for i := range 100 {
		tg := f.target(3)
		tg.Key.Probe = fmt.Sprintf("p%d", i)
		targets = append(targets, tg)
	}
	m.Sync(targets, []*corev1.Pod{f.pod})
	waitFor(t, func() bool { return m.WorkerCount() == 100 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	m.Sync(targets, nil)
	if n := m.WorkerCount(); n != 0 {
		t.Fatalf("%d workers started after shutdown", n)
	}
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before+2 })
}

func TestUserAgent_17_KubeletMajorMinor(t *testing.T) {
	for in, want := range map[string]string{"v1.37.2": "kube-probe/1.37", "v1.36.0-eks-1": "kube-probe/1.36", "1.40.1": "kube-probe/1.40"} {
		if got := UserAgent(in); got != want {
			t.Errorf("UserAgent(%q) = %q, want %q", in, got, want)
		}
	}
	if got := UserAgent(""); !strings.HasPrefix(got, "kube-probe/1.") {
		t.Errorf("fallback User-Agent %q", got)
	}
}

func TestWorker_7_DefaultJitterIsWithinThePeriod(t *testing.T) {
	m := &Manager{}
	m.init()
	for range 1000 {
		if d := m.Jitter(time.Second); d < 0 || d >= time.Second {
			t.Fatalf("jitter %v outside [0, 1s)", d)
		}
	}
}
