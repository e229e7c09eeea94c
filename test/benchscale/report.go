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
	"fmt"
	"io"
	"runtime"
	"time"
)

// unitMiB is the unit of the memory rows.
const unitMiB = "MiB"

func ms(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d.Microseconds())/1000) }

// print writes one run's figures.
func (r result) print(out io.Writer) {
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(out, format+"\n", args...) }
	p("--- %d pods, %d workloads, %d nodes, --strip-cached-objects=%v (load at manager start %s)",
		r.l.pods, r.l.workloads, r.l.nodes, r.strip, r.startLoad)
	p("populate: %s, %.0f pod writes/s", r.populate.Round(time.Second), r.podWrites)
	p("cold start: caches synced %s, every NodePodProbe correct %s after the manager started",
		r.synced.Round(time.Millisecond), r.converge.Round(time.Millisecond))
	p("  manager CPU %.1fs (%.2f cores), peak RSS %.0f MiB; NodePodProbe writes per node %.2f (spec %.2f, most on one node %d)",
		r.cold.cpu.Seconds(), r.cold.cores(), mib(r.cold.peakRSS), r.writes, r.specWrites, r.mostWrites)
	p("  manager API latency: %s", r.coldAPI)
	p("steady: manager RSS %.0f MiB, live heap %.0f MiB; kube-apiserver RSS %.0f MiB, etcd RSS %.0f MiB at the end",
		mib(r.steadyRSS), mib(r.steadyLive), mib(r.apiserver), mib(r.etcd))
	for i, rr := range r.rounds {
		budget := fmt.Sprintf("respected (at most %d active requests in a workload, maxUnavailable %d)", rr.maxActive, r.budget)
		if rr.maxActive > r.budget || rr.unexpected > 0 {
			budget = fmt.Sprintf("EXCEEDED: %d active requests in one workload, maxUnavailable %d; %d requests for pods that did not fail",
				rr.maxActive, r.budget, rr.unexpected)
		}
		p("round %d: %d failures (%d nodes, at most %d on one) -> %d requests (budget allows %d), %d held (%s); %.0f decisions/s, %.0f requests/s; "+
			"status write sent -> request p50 %s p99 %s max %s (acknowledged -> request p50 %s p99 %s); budget %s",
			i, rr.failures, rr.nodes, rr.mostOnNode, rr.restarts, rr.expectRestarts, rr.holds, rr.heldBy, rr.decisionsPerSec,
			rr.restartsPerSec, ms(rr.p50), ms(rr.p99), ms(rr.max), ms(rr.ackP50), ms(rr.ackP99), budget)
		p("  manager CPU %.1fs (%.2f cores, %.1f ms per failure decided; %.0f decision reconciles), peak RSS %.0f MiB, "+
			"API requests %s (load %s)", rr.use.cpu.Seconds(), rr.use.cores(),
			float64(rr.use.cpu.Milliseconds())/float64(rr.failures), rr.reconciles, mib(rr.use.peakRSS), rr.requests, rr.load)
		p("  requests made after the round: %d, of which %d after their pod's failure was cleared (a recovered pod "+
			"restarted); held restarts not requested because the API server already showed them recovered: %.0f",
			rr.late, rr.wrong, rr.notConfirmed)
		p("  manager API latency: %s", rr.latency)
		p("  the daemons' %d status writes took %s to be acknowledged; control plane CPU until the last decision: "+
			"kube-apiserver %.1fs, etcd %.1fs (%.1f ms per failure decided, the daemons' writes included)",
			rr.nodes, rr.written.Round(10*time.Millisecond), rr.apiserverCPU.Seconds(), rr.etcdCPU.Seconds(),
			float64((rr.apiserverCPU+rr.etcdCPU).Milliseconds())/float64(rr.failures))
		cp, mgr := perDecision(rr.apiserverCPU+rr.etcdCPU, rr.failures), perDecision(rr.use.cpu, rr.failures)
		bound := throughputBound(runtime.NumCPU(), cp+mgr)
		p("  throughput: %.0f decisions/s of the %.0f/s that %d cores allow at the CPU measured per decision "+
			"(control plane %s + manager %s): %.0f%%", rr.decisionsPerSec, bound, runtime.NumCPU(), ms(cp), ms(mgr),
			fraction(rr.decisionsPerSec, bound))
		p("  after the round: control plane CPU carrying the %d requests out %.1fs", rr.restarts+rr.late, rr.restoreCPU.Seconds())
		if rr.decideRequests != "" {
			p("  kube-apiserver requests while deciding them: %s", rr.decideRequests)
		}
		if rr.restoreRequests != "" {
			p("  kube-apiserver requests while carrying them out: %s", rr.restoreRequests)
		}
	}
	if c := r.cost; c.restarts > 0 {
		p("control plane CPU per restart (kube-apiserver + etcd, above its idle %.0f ms/s): enrolled %s (%d restarts: "+
			"deciding, carrying out and deleting the request, the rounds' held failures included), native %s (%d "+
			"restarts: the node's events and the pod status); enrolled / native %.1f", c.idle*1000, ms(c.enrolled),
			c.restarts, ms(c.native), c.natives, c.ratio())
	}
}

// printSummary writes one line per run, and, with several sizes, how the figures grow: the
// least-squares line through the measured sizes and its value at 100,000 pods.
func printSummary(out io.Writer, o options, results []result) {
	if len(results) == 0 {
		return
	}
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(out, format+"\n", args...) }
	p("\n%-8s %-6s %10s %10s %9s %9s %9s %9s %8s %10s %9s %9s", "pods", "strip", "converge", "cpu", "peakRSS",
		"steadyRSS", "liveHeap", "writes/n", "dec/s", "p99", "apiserver", "etcd")
	for _, r := range results {
		dec, p99 := 0.0, time.Duration(0)
		for _, rr := range r.rounds {
			dec += rr.decisionsPerSec / float64(len(r.rounds))
			p99 = max(p99, rr.p99)
		}
		p("%-8d %-6v %9.1fs %9.1fs %7.0fMi %7.0fMi %7.0fMi %9.2f %8.0f %10s %7.0fMi %7.0fMi", r.l.pods, r.strip,
			r.converge.Seconds(), r.cold.cpu.Seconds(), mib(r.cold.peakRSS), mib(r.steadyRSS), mib(r.steadyLive),
			r.writes, dec, ms(p99), mib(r.apiserver), mib(r.etcd))
	}
	for _, strip := range o.strip {
		var xs []float64
		var conv, cpu, peak, steady, live, api, etcd []float64
		for _, r := range results {
			if r.strip != strip {
				continue
			}
			xs = append(xs, float64(r.l.pods))
			conv, cpu = append(conv, r.converge.Seconds()), append(cpu, r.cold.cpu.Seconds())
			peak, steady, live = append(peak, mib(r.cold.peakRSS)), append(steady, mib(r.steadyRSS)), append(live, mib(r.steadyLive))
			api, etcd = append(api, mib(r.apiserver)), append(etcd, mib(r.etcd))
		}
		if len(xs) < 2 {
			continue
		}
		p("\ngrowth, strip=%v: least-squares line a + b*pods through %v pods, and its value at 100,000 pods", strip, xs)
		for _, s := range []struct {
			name string
			ys   []float64
			unit string
		}{{"converge", conv, "s"}, {"cold CPU", cpu, "s"}, {"peak RSS", peak, unitMiB}, {"steady RSS", steady, unitMiB},
			{"live heap", live, unitMiB}, {"kube-apiserver RSS", api, unitMiB}, {"etcd RSS", etcd, unitMiB}} {
			a, b := fitLine(xs, s.ys)
			p("  %-18s %8.2f + %8.4f/pod  (%.1f %s per 1,000 pods) -> %.0f %s at 100k", s.name, a, b, b*1000, s.unit,
				a+b*100000, s.unit)
		}
	}
}

// fitLine is the least-squares line through (xs, ys).
func fitLine(xs, ys []float64) (a, b float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	b = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return (sy - b*sx) / n, b
}

// perDecision spreads CPU time over the failures decided.
func perDecision(cpu time.Duration, failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	return cpu / time.Duration(failures)
}

// throughputBound is the most decisions per second the machine's cores could make if deciding
// were all they did, at the CPU one decision costs (control plane and manager together): the
// figure a round's decisions/s is measured against, on any machine.
func throughputBound(cores int, perDecision time.Duration) float64 {
	if perDecision <= 0 {
		return 0
	}
	return float64(cores) / perDecision.Seconds()
}

// fraction is got as a percentage of bound (0 without a bound).
func fraction(got, bound float64) float64 {
	if bound <= 0 {
		return 0
	}
	return 100 * got / bound
}
