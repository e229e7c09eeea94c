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
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/hack/stormchart/series"
)

// sampleEvery is how often a restartRecorder reads the restart counts.
const sampleEvery = 2 * time.Second

// appRef names the pods of one app (label app=name) in a namespace.
type appRef struct{ ns, name string }

// countRestarts sums the restart counts of the app container of the apps' pods that exist now
// (terminating ones too).
func countRestarts(ctx context.Context, apps ...appRef) (int32, error) {
	n := int32(0)
	for _, a := range apps {
		var list corev1.PodList
		if err := k8s.List(ctx, &list, client.InNamespace(a.ns), client.MatchingLabels{"app": a.name}); err != nil {
			return 0, err
		}
		for i := range list.Items {
			n += containerStatus(&list.Items[i], appContainer).RestartCount
		}
	}
	return n, nil
}

// restartsOf sums the restart counts of the app's pods that exist now (terminating ones too).
func restartsOf(ns, name string) int32 {
	n, err := countRestarts(context.Background(), appRef{ns, name})
	Expect(err).NotTo(HaveOccurred())
	return n
}

// restartRecorder samples the restart counts of enrolled apps and of their native twins while a
// storm spec runs, and writes them to the e2e report (storms/<name>.json) for the chart of the
// README (make storm-chart, hack/stormchart).
type restartRecorder struct {
	enrolled, native []appRef
	start            time.Time
	stop, done       chan struct{}
	once             sync.Once

	mu     sync.Mutex
	series series.Series
}

// recordRestarts starts sampling now, which is t = 0 of the series: call it when the sickness
// begins. The sampling ends with finish, or with the spec.
func recordRestarts(name, title string, enrolled, native []appRef) *restartRecorder {
	r := &restartRecorder{enrolled: enrolled, native: native, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{}),
		series: series.Series{Name: name, Title: title, Start: time.Now().UTC().Format(time.RFC3339)}}
	go r.run()
	DeferCleanup(r.finish)
	return r
}

func (r *restartRecorder) run() {
	defer close(r.done)
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	r.sample()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
			r.sample()
		}
	}
}

// sample appends the counts of now; a failed read leaves a gap (the chart holds the last value).
func (r *restartRecorder) sample() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	enrolled, err := countRestarts(ctx, r.enrolled...)
	if err != nil {
		return
	}
	native, err := countRestarts(ctx, r.native...)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.series.Samples = append(r.series.Samples, series.Sample{
		T: time.Since(r.start).Round(100 * time.Millisecond).Seconds(), Enrolled: enrolled, Native: native})
}

// finish takes a last sample, stops the sampling and writes the series (once).
func (r *restartRecorder) finish() {
	r.once.Do(func() {
		close(r.stop)
		<-r.done
		r.sample()
		r.mu.Lock()
		defer r.mu.Unlock()
		Expect(series.Write(reportDir, &r.series)).To(Succeed())
	})
}

// recordRecovery writes how long a hang that a restart cures took to heal on every pod, enrolled
// and native, measured from start, to the e2e report (storms/recovery/<name>.json) for the chart
// of the README: the time enrolling adds, beside the restarts it avoids. fig are the enrolled
// workload's figures of its policy, nil without a policy.
func recordRecovery(name, title string, start time.Time, enrolled, native time.Duration, fig *policyv1alpha1.WorkloadFigures) {
	r := series.Recovery{Name: name, Title: title, Start: start.UTC().Format(time.RFC3339),
		EnrolledSeconds: enrolled.Round(100 * time.Millisecond).Seconds(),
		NativeSeconds:   native.Round(100 * time.Millisecond).Seconds()}
	if fig != nil {
		r.Figures = &series.Figures{Avoided: fig.Avoided, Agreed: fig.Agreed,
			AddedP50Seconds: fig.AddedP50Seconds, AddedMaxSeconds: fig.AddedMaxSeconds}
	}
	Expect(series.WriteRecovery(reportDir, &r)).To(Succeed())
}
