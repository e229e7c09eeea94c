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
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
	compbasemetrics "k8s.io/component-base/metrics"
	remote "k8s.io/cri-client/pkg"
	kprober "k8s.io/kubernetes/pkg/kubelet/prober"
	"k8s.io/kubernetes/pkg/probe"
	execprobe "k8s.io/kubernetes/pkg/probe/exec"
	utilexec "k8s.io/utils/exec"
)

// runKubelet probes every container the way the kubelet's exec probes do: its remote runtime
// service (built with the kubelet's builder calls; the kubelet's default 2 min connection timeout
// and tracing off), a command whose output is ExecSync's stdout followed by stderr, judged by
// pkg/probe/exec, from one goroutine and ticker per probe with the first run spread over a period,
// and the kubelet worker's metric updates per run. Not included: the kubelet's instrumentation
// wrapper around the runtime service (per-call operation metrics).
func runKubelet(ctx context.Context, c config, ids []string, n *counts) error {
	rs, err := remote.NewRemoteRuntimeServiceBuilder().
		WithEndpoint(c.endpoint).
		WithConnectionTimeout(2 * time.Minute).
		WithTracerProvider(noop.NewTracerProvider()).
		Build(ctx)
	if err != nil {
		return fmt.Errorf("kubelet's runtime service: %w", err)
	}
	rt := timedExecer{rt: rs, n: n}
	compbasemetrics.NewKubeRegistry().MustRegister(kprober.ProberResults, kprober.ProberDuration)
	prober := execprobe.New()
	cmd := strings.Fields(c.command)
	for i, id := range ids {
		pod := fmt.Sprintf("pod-%05d", i)
		ok := compbasemetrics.Labels{"probe_type": "Liveness", "result": "successful", "container": "app",
			"pod": pod, "namespace": "bench", "pod_uid": fmt.Sprintf("uid-%05d", i)}
		failed := compbasemetrics.Labels{"probe_type": "Liveness", "result": "failed", "container": "app",
			"pod": pod, "namespace": "bench", "pod_uid": fmt.Sprintf("uid-%05d", i)}
		duration := compbasemetrics.Labels{"probe_type": "Liveness", "container": "app", "pod": pod, "namespace": "bench"}
		go func() {
			time.Sleep(time.Duration(rand.Float64() * float64(c.period)))
			t := time.NewTicker(c.period)
			defer t.Stop()
			for {
				n.probes.Add(1)
				start := time.Now()
				run := func() ([]byte, error) {
					stdout, stderr, err := rt.ExecSync(ctx, id, cmd, c.timeout)
					return append(stdout, stderr...), err
				}
				switch res, _, err := prober.Probe(&inContainer{run: run}); {
				case err != nil:
					n.errors.Add(1)
				case res == probe.Success:
					kprober.ProberResults.With(ok).Inc()
					kprober.ProberDuration.With(duration).Observe(time.Since(start).Seconds())
				default:
					n.failures.Add(1)
					kprober.ProberResults.With(failed).Inc()
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	return nil
}

// inContainer is the exec.Cmd that pkg/probe/exec runs: Start runs the command in the container
// and writes its output to the writer the prober set; the rest is not used by the prober.
type inContainer struct {
	run func() ([]byte, error)
	w   io.Writer
}

var _ utilexec.Cmd = (*inContainer)(nil)

func (c *inContainer) Start() error {
	out, err := c.run()
	if c.w != nil {
		_, _ = c.w.Write(out)
	}
	return err
}
func (c *inContainer) SetStdout(w io.Writer)              { c.w = w }
func (c *inContainer) SetStderr(w io.Writer)              { c.w = w }
func (c *inContainer) Wait() error                        { return nil }
func (c *inContainer) Run() error                         { return c.Start() }
func (c *inContainer) CombinedOutput() ([]byte, error)    { return c.run() }
func (c *inContainer) Output() ([]byte, error)            { return nil, fmt.Errorf("not supported") }
func (c *inContainer) SetDir(string)                      {}
func (c *inContainer) SetStdin(io.Reader)                 {}
func (c *inContainer) SetEnv([]string)                    {}
func (c *inContainer) StdoutPipe() (io.ReadCloser, error) { return nil, fmt.Errorf("not supported") }
func (c *inContainer) StderrPipe() (io.ReadCloser, error) { return nil, fmt.Errorf("not supported") }
func (c *inContainer) Stop()                              {}
