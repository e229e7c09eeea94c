// Command narrate prints, as a readable timeline, what the operator does in one namespace: probe
// failures the node daemon reports, restarts requested, held (and why) and carried out, CRR
// phases and the policies' storm condition. It polls the apiserver until it gets SIGTERM/SIGINT
// or -for has passed. Used by `make demo` (hack/local-cluster/demo.sh).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

func main() {
	ns := flag.String("namespace", "demo", "namespace to narrate")
	dur := flag.Duration("for", 0, "stop after this long (0: until SIGTERM)")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail(err)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(policyv1alpha1.AddToScheme(scheme))
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	n := &narrator{c: c, ns: *ns, since: time.Now().Add(-2 * time.Second),
		seen: map[string]bool{}, crrPhase: map[string]string{}, storm: map[string]string{}}
	for {
		n.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "narrate:", err)
	os.Exit(1)
}

type narrator struct {
	c        client.Client
	ns       string
	since    time.Time // events from before the narration started are history, not news
	seen     map[string]bool
	crrPhase map[string]string
	storm    map[string]string
}

func say(format string, args ...any) {
	fmt.Printf("  %s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (n *narrator) poll(ctx context.Context) {
	var evs eventsv1.EventList
	if err := n.c.List(ctx, &evs, client.InNamespace(n.ns)); err == nil {
		slices.SortFunc(evs.Items, func(a, b eventsv1.Event) int { return eventTime(a).Compare(eventTime(b)) })
		for _, e := range evs.Items {
			count := e.DeprecatedCount
			if e.Series != nil {
				count = e.Series.Count
			}
			key := fmt.Sprintf("%s/%d", e.UID, count)
			if n.seen[key] || eventTime(e).Before(n.since) {
				continue
			}
			n.seen[key] = true
			if line := describe(e); line != "" {
				say("%-34s %s", e.Regarding.Kind+"/"+e.Regarding.Name, line)
			}
		}
	}
	var crrs appsv1alpha1.ContainerRecreateRequestList
	if err := n.c.List(ctx, &crrs, client.InNamespace(n.ns)); err == nil {
		for _, r := range crrs.Items {
			phase := string(r.Status.Phase)
			if phase == "" || n.crrPhase[r.Name] == phase {
				continue
			}
			n.crrPhase[r.Name] = phase
			msg := ""
			if r.Status.Message != "" {
				msg = ": " + r.Status.Message
			}
			say("%-34s restart request %s%s", "CRR/"+r.Name, phase, msg)
		}
	}
	var pols policyv1alpha1.EnhancedLivenessPolicyList
	if err := n.c.List(ctx, &pols, client.InNamespace(n.ns)); err == nil {
		for _, p := range pols.Items {
			cond := meta.FindStatusCondition(p.Status.Conditions, policyv1alpha1.ConditionStormDetected)
			if cond == nil || n.storm[p.Name] == string(cond.Status) {
				continue
			}
			if n.storm[p.Name] == "" && cond.Status != "True" {
				n.storm[p.Name] = string(cond.Status)
				continue
			}
			n.storm[p.Name] = string(cond.Status)
			if cond.Status == "True" {
				say("%-34s STORM DETECTED, every restart of the workload is held: %s", "policy/"+p.Name, cond.Message)
			} else {
				say("%-34s storm over, restarts allowed again: %s", "policy/"+p.Name, cond.Message)
			}
		}
	}
}

func eventTime(e eventsv1.Event) time.Time {
	if e.Series != nil {
		return e.Series.LastObservedTime.Time
	}
	if !e.DeprecatedLastTimestamp.IsZero() {
		return e.DeprecatedLastTimestamp.Time
	}
	return e.EventTime.Time
}

// describe turns an event into a timeline line; "" for the noise a reader does not need.
func describe(e eventsv1.Event) string {
	who := e.ReportingController
	if who == "" {
		who = e.DeprecatedSource.Component
	}
	note := strings.TrimSpace(e.Note)
	switch {
	case e.Reason == "Unhealthy" && who == "kubelet":
		return "kubelet liveness probe failed (native path): " + note
	case e.Reason == "Unhealthy":
		return "liveness probe failed, seen by the node daemon: " + note
	case e.Reason == "RestartRequested":
		return "restart decided by the operator: " + note
	case e.Reason == "RestartHeld":
		return "restart HELD: " + note
	case e.Reason == "Killing" && who == "kubelet":
		return "container killed by the kubelet: " + note
	case e.Reason == "Killing":
		return "container stopped by the node daemon: " + note
	case e.Reason == "Started" && who == "kubelet":
		return "container started"
	case e.Regarding.Kind == "EnhancedLivenessPolicy" || e.Regarding.Kind == "ContainerRecreateRequest":
		return e.Reason + ": " + note
	}
	return ""
}
