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
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// The manager runs as its ServiceAccount would, with the shipped RBAC (config/rbac/role.yaml),
// so the API server's priority and fairness classes it as a workload, not as an admin.
const (
	opNamespace    = appsv1alpha1.DefaultOperatorNamespace
	managerAccount = "controller-manager"
	daemonAccount  = "daemon"
)

// cluster is one envtest control plane (kube-apiserver + etcd) with its data in dir.
type cluster struct {
	env        *envtest.Environment
	dir        string
	cfg        *rest.Config // admin, no client-side rate limit
	c          client.WithWatch
	core       client.Client // the same, speaking protobuf: only for built-in types
	daemons    client.Client // the node daemons' ServiceAccount, no client-side rate limit
	kubeconfig string        // the manager's
}

// startCluster starts envtest with etcd's data under a new temporary directory, which stop
// removes. etcd's backend quota is raised from 2 GiB: 100,000 pods written twice, and their
// NodePodProbes written several times, do not fit before the API server's compaction.
func startCluster() (*cluster, error) {
	dir, err := os.MkdirTemp("", "benchscale-")
	if err != nil {
		return nil, err
	}
	cl := &cluster{dir: dir}
	env, err := testutil.NewEnvironment()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	env.ControlPlaneStopTimeout = time.Minute
	etcd := &envtest.Etcd{DataDir: filepath.Join(dir, "etcd")}
	etcd.Configure().Set("quota-backend-bytes", strconv.Itoa(8<<30))
	env.ControlPlane.Etcd = etcd
	cl.env = env
	cfg, err := env.Start()
	if err != nil {
		cl.stop()
		return nil, err
	}
	cl.cfg = rest.CopyConfig(cfg)
	cl.cfg.QPS = -1
	if cl.c, err = client.NewWithWatch(cl.cfg, client.Options{Scheme: testutil.Scheme()}); err != nil {
		cl.stop()
		return nil, err
	}
	// Protobuf costs the API server less than JSON for the bulk of the writes (pods).
	proto := rest.CopyConfig(cl.cfg)
	proto.ContentType = runtime.ContentTypeProtobuf
	proto.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	if cl.core, err = client.New(proto, client.Options{Scheme: testutil.Scheme()}); err != nil {
		cl.stop()
		return nil, err
	}
	if err := cl.managerIdentity(context.Background(), cfg); err != nil {
		cl.stop()
		return nil, fmt.Errorf("manager identity: %w", err)
	}
	return cl, nil
}

// stop stops the control plane and removes etcd's data and every other file of the run.
func (cl *cluster) stop() {
	if cl.env != nil {
		if err := cl.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}
	if err := os.RemoveAll(cl.dir); err != nil {
		fmt.Fprintln(os.Stderr, "removing", cl.dir+":", err)
	}
}

// managerIdentity creates the operator namespace and two ServiceAccount identities with the
// shipped RBAC: the manager's (manager-role, ClusterRole and Role; a kubeconfig for the manager
// process) and the node daemons' (daemon-role; the client the benchmark writes NodePodProbe and
// request status with). As ServiceAccounts, both go through the API server's priority and
// fairness like in a cluster, instead of the admin's exempt level.
func (cl *cluster) managerIdentity(ctx context.Context, admin *rest.Config) error {
	if err := cl.c.Create(ctx, &corev1.Namespace{ObjectMeta: objectMeta("", opNamespace)}); err != nil {
		return err
	}
	kc, err := cl.serviceAccount(ctx, admin, managerAccount, "role.yaml")
	if err != nil {
		return err
	}
	cl.kubeconfig = filepath.Join(cl.dir, "manager.kubeconfig")
	if err := os.WriteFile(cl.kubeconfig, kc, 0o600); err != nil {
		return err
	}
	if kc, err = cl.serviceAccount(ctx, admin, daemonAccount, "daemon_role.yaml"); err != nil {
		return err
	}
	daemonCfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return err
	}
	daemonCfg.QPS = -1
	cl.daemons, err = client.New(daemonCfg, client.Options{Scheme: testutil.Scheme()})
	return err
}

// serviceAccount binds the roles of config/rbac/<roleFile> to the ServiceAccount account of the
// operator namespace and returns a kubeconfig that authenticates as it.
func (cl *cluster) serviceAccount(ctx context.Context, admin *rest.Config, account, roleFile string) ([]byte, error) {
	roles, err := loadYAML(filepath.Join(testutil.RepoRoot(), "config", "rbac", roleFile))
	if err != nil {
		return nil, err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: opNamespace}}
	for _, r := range roles {
		if r.GetNamespace() != "" {
			r.SetNamespace(opNamespace)
		}
		if err := cl.c.Create(ctx, r); err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err)
		}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: r.GetKind(), Name: r.GetName()}
		var binding client.Object = &rbacv1.ClusterRoleBinding{ObjectMeta: objectMeta("", "bench-"+account),
			RoleRef: ref, Subjects: subject}
		if r.GetKind() == "Role" {
			binding = &rbacv1.RoleBinding{ObjectMeta: objectMeta(opNamespace, "bench-"+account), RoleRef: ref, Subjects: subject}
		}
		if err := cl.c.Create(ctx, binding); err != nil {
			return nil, err
		}
	}
	user, err := cl.env.AddUser(envtest.User{
		Name:   "system:serviceaccount:" + opNamespace + ":" + account,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + opNamespace},
	}, admin)
	if err != nil {
		return nil, err
	}
	return user.KubeConfig()
}

func loadYAML(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// controlPlaneRSS returns the resident memory of this process's kube-apiserver and etcd.
func controlPlaneRSS() map[string]uint64 {
	out := map[string]uint64{}
	for comm, pid := range controlPlanePIDs() {
		if st, err := readProcStatus(pid); err == nil {
			out[comm] = st.rss
		}
	}
	return out
}

// controlPlaneCPU returns the CPU time this process's kube-apiserver and etcd have used.
func controlPlaneCPU() map[string]time.Duration {
	out := map[string]time.Duration{}
	for comm, pid := range controlPlanePIDs() {
		if cpu, err := readProcCPU(pid); err == nil {
			out[comm] = cpu
		}
	}
	return out
}

// controlPlanePIDs finds this process's kube-apiserver and etcd children in /proc by parent PID
// and command name.
func controlPlanePIDs() map[string]string {
	out := map[string]string{}
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(s[closing+1:])
		comm := s[open+1 : closing]
		if len(fields) < 2 || fields[1] != self || (comm != "kube-apiserver" && comm != "etcd") {
			continue
		}
		out[comm] = e.Name()
	}
	return out
}

// profileAPIServer takes a CPU profile of kube-apiserver for d (its /debug/pprof, as the admin)
// into path.
func (cl *cluster) profileAPIServer(ctx context.Context, d time.Duration, path string) {
	hc, err := rest.HTTPClientFor(cl.cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube-apiserver profile:", err)
		return
	}
	saveProfile(ctx, hc, strings.TrimSuffix(cl.cfg.Host, "/"), d, path)
}

// saveProfile fetches a CPU profile of d from base's /debug/pprof and writes it to path. It runs
// beside a round, so errors are printed, not returned.
func saveProfile(ctx context.Context, hc *http.Client, base string, d time.Duration, path string) {
	fetchProfile(ctx, hc, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(d.Seconds())), path, "CPU profile")
}

// saveHeapProfile fetches a heap profile from base's /debug/pprof after a garbage collection (the
// live heap by allocation site: `go tool pprof -top -sample_index=inuse_space path`).
func saveHeapProfile(ctx context.Context, hc *http.Client, base, path string) {
	fetchProfile(ctx, hc, base+"/debug/pprof/heap?gc=1", path, "heap profile")
}

func fetchProfile(ctx context.Context, hc *http.Client, url, path, what string) {
	err := func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", resp.Status, body)
		}
		if err != nil {
			return err
		}
		return os.WriteFile(path, body, 0o644)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, what, path+":", err)
		return
	}
	fmt.Printf("%s %s: %s\n", time.Now().Format("15:04:05"), what, path)
}

// requestCounts reads kube-apiserver's apiserver_request_total as "verb resource[/subresource]" ->
// count (nil when it cannot be read: the figure is informational).
func (cl *cluster) requestCounts(ctx context.Context) map[string]float64 {
	hc, err := rest.HTTPClientFor(cl.cfg)
	if err != nil {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cl.cfg.Host, "/")+"/metrics", nil)
	if err != nil {
		return nil
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil
	}
	defer func() { _ = resp.Body.Close() }()
	all, err := testutil.ParseMetrics(resp.Body)
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for series, v := range all {
		if !strings.HasPrefix(series, "apiserver_request_total{") {
			continue
		}
		key := label(series, "verb") + " " + label(series, "resource")
		if sub := label(series, "subresource"); sub != "" {
			key += "/" + sub
		}
		out[key] += v
	}
	return out
}

// label is the value of name in a series' labels ("" if absent).
func label(series, name string) string {
	_, tail, ok := strings.Cut(series, ","+name+`="`)
	if !ok {
		if _, tail, ok = strings.Cut(series, "{"+name+`="`); !ok {
			return ""
		}
	}
	v, _, _ := strings.Cut(tail, `"`)
	return v
}

// diffCounts lists what grew from a to b, largest first.
func diffCounts(a, b map[string]float64) string {
	type kv struct {
		k string
		v float64
	}
	var d []kv
	for k, v := range b {
		if n := v - a[k]; n > 0 {
			d = append(d, kv{k, n})
		}
	}
	slices.SortFunc(d, func(x, y kv) int { return cmp.Compare(y.v, x.v) })
	parts := make([]string, 0, len(d))
	for _, e := range d {
		parts = append(parts, fmt.Sprintf("%s %.0f", e.k, e.v))
	}
	return strings.Join(parts, ", ")
}
