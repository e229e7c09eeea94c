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

package managercache

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

const module = "github.com/enhanced-liveness/enhanced-liveness-operator"

// notCachedPodReaders are packages of the manager whose pod-typed values never come from its
// cache, so their reads are not held to keptPodFields.
var notCachedPodReaders = map[string]string{
	module + "/internal/webhook/core/v1":      "reads the pod of the admission request, whole",
	module + "/internal/controller/daemonset": "reads the pod templates of Deployments and DaemonSets, never pods",
}

// readsLivePods are functions that read a dropped pod field only of a pod they did not take from
// the cache, or only where the field is empty on every cached pod, by function (types.Func
// FullName) and why.
var readsLivePods = map[string]string{
	module + "/internal/webhook/apps/v1alpha1.probeGrace": "a native probe's grace period: a cached pod is " +
		"used only when every container's probe is in the probe-context annotation (graceKnown), and then " +
		"the native probe was moved there by the pod webhook; otherwise the pod was read live",
	module + "/internal/manager/daemonnodes.Excluded": "the pod webhook's pod being admitted (PodDefaulter.unserved): " +
		"its node selection, which the cache drops, is read only from the admission request",
	module + "/internal/webhook/core/v1/steering.Apply": "the pod webhook's pod being admitted (PodDefaulter.steer): its " +
		"affinity, which the cache drops, is read and written only on the admission request's pod",
	module + "/internal/webhook/core/v1/steering.removeTerm": "called by steering.Apply only, on the admission request's pod",
	module + "/internal/decision/facts.boundBySpec": "what binds a pod to its node, before an eviction: called by " +
		"Reader.placement only, on the pod it read with the API reader",
	"(*" + module + "/internal/decision/facts.Reader).claimsNode": "the claims of a pod, before an eviction: called " +
		"by Reader.placement only, on the pod it read with the API reader",
}

// TestManagerReadsOnlyKeptPodFields reads the manager's code (go/types) and fails on any read of a
// pod field that StripPod drops: with the stripped cache that read would see an empty value. A
// read is a selection of a field of one of the types keptPodFields has a rule for (ObjectMeta,
// PodSpec, Container, PodStatus, ContainerStatus, and the waiting and terminated states): every
// way into dropped data from a pod passes through one of them. Constant annotation keys read
// from a pod are checked against the kept keys too.
//
// What is read: every function of the packages only the manager imports (its controllers,
// webhooks and decision packages; not notCachedPodReaders), and in packages shared with the node
// daemon (podutil, probecontext, the API types, ...) the functions those call, directly or
// through a function value. Calls through interfaces and reads inside other modules (e.g.
// equality.Semantic on a whole pod) are not followed.
func TestManagerReadsOnlyKeptPodFields(t *testing.T) {
	roots, shared := managerPackages(t)
	pkgs := loadSyntax(t, append(slices.Clone(roots), shared...))

	decls := map[*types.Func]*ast.FuncDecl{}
	declPkg := map[*ast.FuncDecl]*packages.Package{}
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					if fn, ok := p.TypesInfo.Defs[fd.Name].(*types.Func); ok {
						decls[fn] = fd
						declPkg[fd] = p
					}
				}
			}
		}
	}

	s := &scan{decls: decls, declPkg: declPkg, seen: map[ast.Node]bool{}}
	for _, p := range pkgs {
		if !slices.Contains(roots, p.PkgPath) {
			continue
		}
		for _, f := range p.Syntax {
			for _, d := range f.Decls {
				s.push(p, d)
			}
		}
	}
	s.run()
	if len(s.reached) == 0 {
		t.Fatal("no code was read: the scan is broken")
	}
	for _, v := range s.violations {
		if readsLivePods[v.fn] == "" {
			t.Error(v.msg)
		}
	}
	for fn := range readsLivePods {
		if !slices.ContainsFunc(s.violations, func(v violation) bool { return v.fn == fn }) {
			t.Errorf("readsLivePods names %s, which reads no dropped pod field (any more): remove it", fn)
		}
	}
	t.Logf("read %d functions and declarations in %d packages", len(s.reached), len(pkgs))
}

// managerPackages returns the module's packages the manager binary imports: those the node
// daemon does not import are roots (read whole), the others are shared (read where called).
func managerPackages(t *testing.T) (roots, shared []string) {
	t.Helper()
	deps := func(main string) map[string]bool {
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps,
			Dir: testutil.RepoRoot()}
		pkgs, err := packages.Load(cfg, module+main)
		if err != nil || len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
			t.Fatalf("listing %s: %v %v", main, err, pkgs)
		}
		out := map[string]bool{}
		packages.Visit(pkgs, nil, func(p *packages.Package) {
			if strings.HasPrefix(p.PkgPath, module+"/") {
				out[p.PkgPath] = true
			}
		})
		return out
	}
	manager, daemon := deps("/cmd"), deps("/cmd/daemon")
	for p := range manager {
		switch {
		case daemon[p]:
			shared = append(shared, p)
		case notCachedPodReaders[p] == "":
			roots = append(roots, p)
		}
	}
	for p := range notCachedPodReaders {
		if !manager[p] {
			t.Errorf("notCachedPodReaders names %s, which the manager does not import: update the list", p)
		}
	}
	slices.Sort(roots)
	return roots, shared
}

func loadSyntax(t *testing.T, paths []string) []*packages.Package {
	t.Helper()
	cfg := &packages.Config{Dir: testutil.RepoRoot(), Mode: packages.NeedName | packages.NeedFiles |
		packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("loading %s: %v", p.PkgPath, e)
		}
	}
	return pkgs
}

type work struct {
	pkg  *packages.Package
	node ast.Node
}

type violation struct{ fn, msg string }

type scan struct {
	decls      map[*types.Func]*ast.FuncDecl
	declPkg    map[*ast.FuncDecl]*packages.Package
	seen       map[ast.Node]bool
	queue      []work
	reached    []ast.Node
	violations []violation
}

func (s *scan) push(p *packages.Package, n ast.Node) {
	if !s.seen[n] {
		s.seen[n] = true
		s.queue = append(s.queue, work{p, n})
	}
}

func (s *scan) run() {
	for len(s.queue) > 0 {
		w := s.queue[0]
		s.queue = s.queue[1:]
		s.reached = append(s.reached, w.node)
		fn := ""
		if fd, ok := w.node.(*ast.FuncDecl); ok {
			fn = w.pkg.TypesInfo.Defs[fd.Name].(*types.Func).FullName()
		}
		s.read(w.pkg, fn, w.node)
	}
}

// read checks the field reads of one declaration and queues the module functions it uses.
func (s *scan) read(p *packages.Package, fn string, n ast.Node) {
	info := p.TypesInfo
	writes := map[*ast.SelectorExpr]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if se, ok := ast.Unparen(l).(*ast.SelectorExpr); ok {
					writes[se] = true
				}
			}
		case *ast.Ident:
			if fn, ok := info.Uses[n].(*types.Func); ok {
				if d := s.decls[fn.Origin()]; d != nil {
					s.push(s.declPkg[d], d)
				}
			}
		case *ast.SelectorExpr:
			if sel := info.Selections[n]; sel != nil && !writes[n] {
				for _, f := range selectedFields(sel) {
					if !kept(f.typ, f.field) {
						s.violate(p, fn, n, fmt.Sprintf("reads %s.%s of a pod, which the manager's cache drops", f.typ, f.field))
					}
				}
			}
		case *ast.IndexExpr:
			s.readAnnotation(p, fn, n)
		}
		return true
	})
}

// readAnnotation checks pod.Annotations[key] with a constant key.
func (s *scan) readAnnotation(p *packages.Package, fn string, n *ast.IndexExpr) {
	se, ok := ast.Unparen(n.X).(*ast.SelectorExpr)
	if !ok || se.Sel.Name != "Annotations" {
		return
	}
	sel := p.TypesInfo.Selections[se]
	key := p.TypesInfo.Types[n.Index].Value
	if sel == nil || key == nil || key.Kind() != constant.String || typeName(sel.Recv()) != corePod {
		return
	}
	if k := constant.StringVal(key); !operatorAnnotation(k) {
		s.violate(p, fn, n, fmt.Sprintf("reads the pod annotation %q, which the manager's cache drops", k))
	}
}

func (s *scan) violate(p *packages.Package, fn string, n ast.Node, what string) {
	pos := p.Fset.Position(n.Pos())
	rel, err := filepath.Rel(testutil.RepoRoot(), pos.Filename)
	if err != nil {
		rel = pos.Filename
	}
	s.violations = append(s.violations, violation{fn, fmt.Sprintf("%s:%d (%s): %s: keep it in keptPodFields and "+
		"StripPod (internal/manager/managercache/pod.go), or read the pod with the API reader", rel, pos.Line, fn, what)})
}

type typeField struct{ typ, field string }

// selectedFields lists the struct fields a selection goes through, embedded ones included
// (pod.Annotations is pod.ObjectMeta.Annotations); a promoted method adds the fields it is
// promoted through, and an ObjectMeta getter (GetAnnotations) the field it returns.
func selectedFields(sel *types.Selection) []typeField {
	var out []typeField
	t := sel.Recv()
	path := sel.Index()
	if sel.Kind() != types.FieldVal {
		path = path[:len(path)-1]
	}
	for _, i := range path {
		st, ok := deref(t).Underlying().(*types.Struct)
		if !ok {
			return out
		}
		f := st.Field(i)
		out = append(out, typeField{typeName(t), f.Name()})
		t = f.Type()
	}
	if sel.Kind() == types.MethodVal && typeName(t) == metaObjectMeta {
		if field, ok := strings.CutPrefix(sel.Obj().Name(), "Get"); ok {
			out = append(out, typeField{metaObjectMeta, field})
		}
	}
	return out
}

const (
	corePod        = "k8s.io/api/core/v1.Pod"
	metaObjectMeta = "k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta"
)

func deref(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

func typeName(t types.Type) string {
	if n, ok := types.Unalias(deref(t)).(*types.Named); ok && n.Obj().Pkg() != nil {
		return n.Obj().Pkg().Path() + "." + n.Obj().Name()
	}
	return ""
}

// kept says whether StripPod keeps field of the type named typ; types keptPodFields has no rule
// for are not pod-specific and not checked.
func kept(typ, field string) bool {
	for rt, rule := range keptPodFields {
		if rt.PkgPath()+"."+rt.Name() == typ {
			return rule.keeps(field)
		}
	}
	return true
}

func (r fieldRule) keeps(field string) bool {
	if r.only != nil {
		return slices.Contains(r.only, field)
	}
	return !slices.Contains(r.except, field)
}
