// Command narrate plays a part of the story of `make demo` (hack/local-cluster/demo.sh) on the demo
// app (-phase shadow: steps 5-6, the policy in Shadow mode; -phase enforce: steps 8-10) and tells
// what really happened: it makes pods sick as the story says (story.go), prints a timeline
// of what the operator does (probe failures the node daemon reports, restarts requested, held and
// why, restart requests' phases, the policy's conditions), records the facts of each step
// (record.go) and judges them against the story's expected outcome (verdict.go). It exits 1,
// naming the steps, when any step did not happen as the story says.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

const pollEvery = 250 * time.Millisecond

func main() {
	ns := flag.String("namespace", "demo", "namespace of the demo app")
	policy := flag.String("policy", "shop", "the demo's EnhancedLivenessPolicy")
	deploy := flag.String("deployment", "checkout", "the demo's Deployment (its pods are labelled app=<name>)")
	t0 := flag.Int64("t0", time.Now().Unix(), "Unix time the demo started, for the banners' elapsed seconds")
	phase := flag.String("phase", phaseEnforce, "which part of the story to play: "+phaseShadow+
		" (the policy in Shadow mode: the kubelet restarts, the operator counts what it would have done) or "+
		phaseEnforce+" (the policy in Enforce mode, the pods re-created under it)")
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

	r := newRecorder(c, *ns, *policy, *deploy, map[string]string{"app": *deploy})
	d := &demo{r: r, t0: time.Unix(*t0, 0), http: &http.Client{Timeout: 3 * time.Second}}
	switch *phase {
	case phaseShadow:
		d.story, d.shadow = shadowStory, true
	case phaseEnforce:
		d.story = story
	default:
		fail(fmt.Errorf("-phase: must be %s or %s, got %q", phaseShadow, phaseEnforce, *phase))
	}
	verdicts, err := d.play(ctx)
	if err != nil {
		fail(err)
	}
	banner(d.t0, "verdicts: computed from restart counts, restart requests, RestartHeld events and the policy's status")
	var failed []string
	for i, v := range verdicts {
		s := d.story[i]
		if v.OK {
			fmt.Printf("  step %d as the story says: %s\n", s.num, v.Summary)
			continue
		}
		failed = append(failed, fmt.Sprint(s.num))
		fmt.Printf("  step %d DID NOT HAPPEN AS THE STORY SAYS: %s\n", s.num, v.Summary)
		for _, p := range v.Problems {
			fmt.Printf("         %s\n", p)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "narrate: step %s did not happen as the story says (see the verdicts above)\n",
			strings.Join(failed, ", "))
		os.Exit(1)
	}
	fmt.Println("  every step happened as the story says")
	if d.shadow {
		wouldHave(d.t0, verdicts)
	}
}

// Phases of the story (-phase).
const (
	phaseShadow  = "shadow"
	phaseEnforce = "enforce"
)

// wouldHave prints what enrolling would have changed, from the Shadow step's facts.
func wouldHave(t0 time.Time, verdicts []Verdict) {
	f := verdicts[0].Facts
	banner(t0, "what enrolling would have changed (the policy's status.figures, computed by the operator)")
	fmt.Printf("  the kubelet restarted the %d sick pods %d times; with the operator in charge %d of those restarts\n"+
		"  would have been held (%s), and %d made as the kubelet did\n",
		len(f.Sick), sum(f.Restarts), f.WouldHold, cmp.Or(countsByReason(f.WouldHoldBy), "no reason counted"), f.WouldRestart)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "narrate:", err)
	os.Exit(2)
}

func banner(t0 time.Time, title string) {
	fmt.Printf("\n\033[1m== %s\033[0m  (%ds)\n", title, int(time.Since(t0).Seconds()))
}

type demo struct {
	story  []step
	shadow bool // the policy is in Shadow mode
	r      *recorder
	t0     time.Time
	http   *http.Client
	pods   []corev1.Pod // the 6 pods as the story started, by name
}

// play checks the setup the story assumes, then plays every step and judges it.
func (d *demo) play(ctx context.Context) ([]Verdict, error) {
	s, err := d.r.take(ctx)
	if err != nil {
		return nil, err
	}
	if err := assumptions(s, d.shadow); err != nil {
		return nil, fmt.Errorf("the demo's setup is not what the story assumes: %w", err)
	}
	d.r.prime(s)
	d.pods = s.pods
	var verdicts []Verdict
	for _, st := range d.story {
		v, err := d.step(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", st.num, err)
		}
		verdicts = append(verdicts, v)
	}
	return verdicts, nil
}

func assumptions(s *snapshot, shadow bool) error {
	spec := s.policy.Spec
	mu, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, replicas, true)
	if err != nil || spec.MaxUnavailable == nil {
		return fmt.Errorf("policy %s has no usable maxUnavailable", s.policy.Name)
	}
	mf, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxFailing, replicas, true)
	if err != nil || spec.MaxFailing == nil {
		return fmt.Errorf("policy %s has no usable maxFailing", s.policy.Name)
	}
	switch {
	case s.desire != replicas || len(s.pods) != replicas:
		return fmt.Errorf("want %d replicas and pods, the Deployment wants %d and %d pods run", replicas, s.desire, len(s.pods))
	case mu != maxUnavailable || mf != maxFailing:
		return fmt.Errorf("want maxUnavailable %d and maxFailing %d of %d, policy %s has %d and %d",
			maxUnavailable, maxFailing, replicas, s.policy.Name, mu, mf)
	case spec.Mode.IsShadow() != shadow:
		return fmt.Errorf("policy %s is in %s mode, the story's part wants %s", s.policy.Name, spec.Mode, wantMode(shadow))
	}
	for _, p := range s.pods {
		if appsv1alpha1.AdmittedInShadow(p.Labels) != shadow {
			return fmt.Errorf("pod %s was admitted in %s mode, the story's part wants %s (re-create the pods after a mode "+
				"change: kubectl rollout restart)", p.Name, p.Labels[appsv1alpha1.LabelMode], wantMode(shadow))
		}
	}
	return nil
}

func wantMode(shadow bool) string {
	if shadow {
		return appsv1alpha1.ModeShadow
	}
	return appsv1alpha1.ModeEnforce
}

// step plays one step: act, watch, judge. An action that cannot be carried out is a failed step,
// not an aborted demo: the verdict says so.
func (d *demo) step(ctx context.Context, st step) (Verdict, error) {
	banner(d.t0, fmt.Sprintf("%d. %s", st.num, st.title))
	targets, sick := d.pods, []string(nil)
	if st.act != dependencyUp {
		targets = nil
		for _, i := range st.pods {
			targets = append(targets, d.pods[i])
			sick = append(sick, d.pods[i].Name)
		}
	}
	s, err := d.take(ctx)
	if err != nil {
		return Verdict{}, err
	}
	d.r.begin(sick, s)
	actErr := d.act(ctx, st.act, targets)
	start := time.Now()
	quietFrom := time.Time{}
	for {
		if err := sleep(ctx, pollEvery); err != nil {
			return Verdict{}, err
		}
		s, err := d.take(ctx)
		if err != nil {
			return Verdict{}, err
		}
		d.r.observe(s)
		el := time.Since(start)
		if quietFrom.IsZero() && ((el >= st.minFor && st.settled(*d.r.cur)) || el >= st.maxFor) {
			quietFrom = time.Now()
		}
		if !quietFrom.IsZero() && time.Since(quietFrom) >= st.quiet {
			break
		}
	}
	v := Judge(st.expect, d.r.end())
	if actErr != nil {
		v.OK = false
		v.Problems = append([]string{"the step could not be carried out: " + actErr.Error()}, v.Problems...)
	}
	if v.OK {
		fmt.Printf("  -> step %d as the story says: %s\n", st.num, v.Summary)
	} else {
		fmt.Printf("  -> step %d DID NOT HAPPEN AS THE STORY SAYS: %s\n", st.num, v.Summary)
		for _, p := range v.Problems {
			fmt.Printf("       %s\n", p)
		}
	}
	return v, nil
}

// take polls, riding out an apiserver hiccup for up to 30 s (the machine is often loaded).
func (d *demo) take(ctx context.Context) (*snapshot, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := d.r.take(ctx)
		if err == nil || time.Now().After(deadline) {
			return s, err
		}
		if err := sleep(ctx, time.Second); err != nil {
			return nil, err
		}
	}
}

// act switches the app's health on the target pods, all at once: a shared dependency fails
// everywhere in the same moment.
func (d *demo) act(ctx context.Context, a action, pods []corev1.Pod) error {
	paths := map[action][]string{
		stuckProcess:   {"/admin/sick"},
		dependencyDown: {"/admin/dependency-down"},
		dependencyUp:   {"/admin/dependency-up", "/admin/healthy"},
	}[a]
	what := map[action]string{
		stuckProcess:   "the demo makes its process stuck (a restart cures it)",
		dependencyDown: "the demo takes its dependency down (kept on an emptyDir: a restart does not cure it)",
		dependencyUp:   "the demo brings its dependency back",
	}[a]
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i, p := range pods {
		wg.Go(func() {
			for _, path := range paths {
				if err := d.post(ctx, p, path); err != nil {
					errs[i] = err
					return
				}
			}
			say("%-34s %s: POST %s", "Pod/"+p.Name, what, strings.Join(paths, ", "))
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// post calls an admin endpoint of the app, retrying for a few seconds: a container being
// restarted does not answer.
func (d *demo) post(ctx context.Context, p corev1.Pod, path string) error {
	url := "http://" + p.Status.PodIP + ":8080" + path
	var last error
	for range 5 {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		if err != nil {
			return err
		}
		resp, err := d.http.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s", resp.Status)
		}
		last = fmt.Errorf("POST %s (pod %s): %w", url, p.Name, err)
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
	return last
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
