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

package docs

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// The binaries whose facts reference.md documents, by the name its tables use.
const (
	manager = "manager"
	daemon  = "daemon"
	// managerStop is the manager's subcommand, with flags of its own.
	managerStop = "stop"
)

var mainPackages = map[string]string{
	manager: modulePath + "/cmd",
	daemon:  modulePath + "/cmd/daemon",
}

const modulePath = "github.com/enhanced-liveness/enhanced-liveness-operator"

// metric is one metric the code defines.
type metric struct {
	name, kind string // kind: counter, gauge, histogram, summary
	labels     []string
	servedBy   []string
	pos        string
}

// conditionReason is one (type, reason) pair a condition of the code can carry.
type conditionReason struct{ condType, reason string }

// codeFacts is what the operator's code emits, read from its syntax and types: every value is a
// constant the compiler knows, followed through variables, parameters and struct fields.
type codeFacts struct {
	metrics     map[string]*metric
	events      map[string][]string // reason -> binaries emitting it
	conditions  map[conditionReason]bool
	holdReasons map[string]bool
	problems    []string // what could not be read: a fact the test cannot check is a failure
}

// loadCodeFacts type-checks the module's packages that the two binaries import and collects
// their metrics, event reasons, condition types and reasons, and hold reasons.
func loadCodeFacts(root string) (*codeFacts, error) {
	// Which of the module's packages each binary links.
	graphCfg := &packages.Config{Dir: root, Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps}
	mains, err := packages.Load(graphCfg, mainPackages[manager], mainPackages[daemon])
	if err != nil {
		return nil, err
	}
	linkedBy := map[string][]string{} // package path -> binaries
	for _, m := range mains {
		bin := manager
		if m.PkgPath == mainPackages[daemon] {
			bin = daemon
		}
		packages.Visit([]*packages.Package{m}, nil, func(p *packages.Package) {
			if strings.HasPrefix(p.PkgPath, modulePath) && !slices.Contains(linkedBy[p.PkgPath], bin) {
				linkedBy[p.PkgPath] = append(linkedBy[p.PkgPath], bin)
			}
		})
	}
	var paths []string
	for p := range linkedBy {
		paths = append(paths, p)
	}
	slices.Sort(paths)

	cfg := &packages.Config{Dir: root, Fset: token.NewFileSet(), Mode: packages.NeedName | packages.NeedSyntax | packages.NeedTypes |
		packages.NeedTypesInfo | packages.NeedImports}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, err
	}
	s := &scanner{fset: cfg.Fset, linkedBy: linkedBy, facts: &codeFacts{
		metrics: map[string]*metric{}, events: map[string][]string{},
		conditions: map[conditionReason]bool{}, holdReasons: map[string]bool{},
	}}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("loading %s: %v", p.PkgPath, p.Errors)
		}
		s.pkgs = append(s.pkgs, p)
	}
	s.scan()
	return s.facts, nil
}

type scanner struct {
	fset     *token.FileSet
	pkgs     []*packages.Package
	linkedBy map[string][]string
	facts    *codeFacts
}

func (s *scanner) problem(pos token.Pos, format string, args ...any) {
	s.facts.problems = append(s.facts.problems, s.fset.Position(pos).String()+": "+fmt.Sprintf(format, args...))
}

// scan walks every file once and records what it finds.
func (s *scanner) scan() {
	for _, p := range s.pkgs {
		s.holdReasons(p)
		for _, f := range p.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					s.metricCall(p, n)
					s.eventCall(p, n)
				case *ast.CompositeLit:
					s.conditionLiteral(p, n)
				case *ast.AssignStmt:
					s.conditionAssignment(p, n)
				}
				return true
			})
		}
	}
}

// holdReasons are the constants of the hold-reason type: a string type named Reason or
// HoldReason (the reason a restart was held; the RestartHeld event's action).
var holdReasonType = regexp.MustCompile(`^(Hold)?Reason$`)

func (s *scanner) holdReasons(p *packages.Package) {
	scope := p.Types.Scope()
	for _, name := range scope.Names() {
		c, ok := scope.Lookup(name).(*types.Const)
		if !ok {
			continue
		}
		named, ok := c.Type().(*types.Named)
		if !ok || named.Obj().Pkg() != p.Types || !holdReasonType.MatchString(named.Obj().Name()) {
			continue
		}
		s.facts.holdReasons[constString(c.Val())] = true
	}
}

// calleeFunc is the function or method a call calls, if it is a named one.
func calleeFunc(info *types.Info, call *ast.CallExpr) *types.Func {
	switch fn := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		f, _ := info.Uses[fn].(*types.Func)
		return f
	case *ast.SelectorExpr:
		f, _ := info.Uses[fn.Sel].(*types.Func)
		return f
	}
	return nil
}

func funcPkgPath(f *types.Func) string {
	if f.Pkg() == nil {
		return ""
	}
	return f.Pkg().Path()
}

const prometheusPkg = "github.com/prometheus/client_golang/prometheus"

var metricConstructors = map[string]string{
	"NewCounter": "counter", "NewCounterVec": "counter", "NewGauge": "gauge", "NewGaugeVec": "gauge",
	"NewHistogram": "histogram", "NewHistogramVec": "histogram", "NewSummary": "summary", "NewSummaryVec": "summary",
}

// metricCall records a metric defined by a prometheus constructor or descriptor.
func (s *scanner) metricCall(p *packages.Package, call *ast.CallExpr) {
	f := calleeFunc(p.TypesInfo, call)
	if f == nil || funcPkgPath(f) != prometheusPkg {
		return
	}
	m := &metric{pos: s.fset.Position(call.Pos()).String(), servedBy: s.linkedBy[p.PkgPath]}
	switch {
	case metricConstructors[f.Name()] != "":
		m.kind = metricConstructors[f.Name()]
		name, ok := s.optsName(p, call.Args[0])
		if !ok {
			return
		}
		m.name = name
		if strings.HasSuffix(f.Name(), "Vec") {
			if m.labels, ok = s.strings(p, call.Args[1], 0); !ok {
				return
			}
		}
	case f.Name() == "NewDesc":
		names, ok := s.values(p, call.Args[0], 0)
		if !ok || len(names) != 1 {
			s.problem(call.Pos(), "metric descriptor name is not one constant")
			return
		}
		m.name = names[0]
		if m.labels, ok = s.strings(p, call.Args[2], 0); !ok {
			return
		}
		if m.kind = s.descKind(p, call); m.kind == "" {
			return
		}
	default:
		return
	}
	slices.Sort(m.labels)
	if prev, dup := s.facts.metrics[m.name]; dup {
		s.problem(call.Pos(), "metric %s is also defined at %s", m.name, prev.pos)
		return
	}
	s.facts.metrics[m.name] = m
}

// optsName reads Namespace, Subsystem and Name of a prometheus *Opts composite literal.
func (s *scanner) optsName(p *packages.Package, e ast.Expr) (string, bool) {
	lit, ok := ast.Unparen(e).(*ast.CompositeLit)
	if !ok {
		s.problem(e.Pos(), "metric options are not a composite literal")
		return "", false
	}
	parts := map[string]string{}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key := kv.Key.(*ast.Ident).Name
		if key != "Namespace" && key != "Subsystem" && key != "Name" {
			continue
		}
		v, ok := s.values(p, kv.Value, 0)
		if !ok || len(v) != 1 {
			s.problem(kv.Pos(), "metric %s is not one constant", key)
			return "", false
		}
		parts[key] = v[0]
	}
	var name []string
	for _, k := range []string{"Namespace", "Subsystem", "Name"} {
		if parts[k] != "" {
			name = append(name, parts[k])
		}
	}
	return strings.Join(name, "_"), len(name) > 0
}

// descKind finds how the metrics of a descriptor are built: a const metric with a value type
// (counter, gauge) or a const histogram.
func (s *scanner) descKind(p *packages.Package, newDesc *ast.CallExpr) string {
	desc := s.assignedTo(p, newDesc)
	if desc == nil {
		s.problem(newDesc.Pos(), "metric descriptor is not assigned to a variable")
		return ""
	}
	kinds := map[string]bool{}
	for _, q := range s.pkgs {
		for _, f := range q.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				fn := calleeFunc(q.TypesInfo, call)
				id, ok := ast.Unparen(call.Args[0]).(*ast.Ident)
				if fn == nil || funcPkgPath(fn) != prometheusPkg || !ok || q.TypesInfo.Uses[id] != desc {
					return true
				}
				switch fn.Name() {
				case "MustNewConstMetric", "NewConstMetric", "MustNewConstMetricWithCreatedTimestamp":
					if v := q.TypesInfo.Types[call.Args[1]].Value; v != nil {
						kinds[map[string]string{"1": "counter", "2": "gauge", "3": "untyped"}[v.ExactString()]] = true
					}
				case "MustNewConstHistogram", "NewConstHistogram", "MustNewConstHistogramWithCreatedTimestamp":
					kinds["histogram"] = true
				case "MustNewConstSummary", "NewConstSummary":
					kinds["summary"] = true
				}
				return true
			})
		}
	}
	if len(kinds) != 1 || kinds[""] {
		s.problem(newDesc.Pos(), "cannot tell the type of the metrics of this descriptor (found %v)", kinds)
		return ""
	}
	for k := range kinds {
		return k
	}
	return ""
}

// assignedTo is the package-level or local variable an expression is assigned to, if any.
func (s *scanner) assignedTo(p *packages.Package, e ast.Expr) types.Object {
	var found types.Object
	for _, f := range p.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, v := range n.Values {
					if v == e && i < len(n.Names) {
						found = p.TypesInfo.Defs[n.Names[i]]
					}
				}
			case *ast.AssignStmt:
				for i, v := range n.Rhs {
					if id, ok := n.Lhs[i].(*ast.Ident); ok && v == e && len(n.Lhs) == len(n.Rhs) {
						found = p.TypesInfo.ObjectOf(id)
					}
				}
			}
			return found == nil
		})
	}
	return found
}

// clientGo holds the event recorders (tools/events, tools/record, and the internal package the
// former aliases).
const clientGo = "k8s.io/client-go/"

// eventCall records the reasons of an event a recorder emits.
func (s *scanner) eventCall(p *packages.Package, call *ast.CallExpr) {
	f := calleeFunc(p.TypesInfo, call)
	if f == nil || !strings.HasPrefix(funcPkgPath(f), clientGo) || !strings.HasPrefix(f.Name(), "Event") &&
		f.Name() != "AnnotatedEventf" {
		return
	}
	sig := f.Type().(*types.Signature)
	idx := -1
	for i := range sig.Params().Len() {
		if sig.Params().At(i).Name() == "reason" {
			idx = i
		}
	}
	if idx < 0 || sig.Recv() == nil {
		return
	}
	reasons, ok := s.values(p, call.Args[idx], 0)
	if !ok {
		return
	}
	for _, r := range reasons {
		for _, bin := range s.linkedBy[p.PkgPath] {
			if !slices.Contains(s.facts.events[r], bin) {
				s.facts.events[r] = append(s.facts.events[r], bin)
			}
		}
	}
}

const metav1Pkg = "k8s.io/apimachinery/pkg/apis/meta/v1"

func isCondition(t types.Type) bool {
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return false
	}
	// A Node condition the manager sets (corev1.NodeCondition) is documented as the others are.
	name, pkg := named.Obj().Name(), named.Obj().Pkg().Path()
	return name == "Condition" && pkg == metav1Pkg || name == "NodeCondition" && pkg == corev1Pkg
}

const corev1Pkg = "k8s.io/api/core/v1"

// conditionLiteral records the type and reason of a metav1.Condition (or corev1.NodeCondition)
// literal.
func (s *scanner) conditionLiteral(p *packages.Package, lit *ast.CompositeLit) {
	if !isCondition(p.TypesInfo.TypeOf(lit)) {
		return
	}
	typ, reason := fieldValue(lit, "Type"), fieldValue(lit, "Reason")
	if typ == nil || reason == nil {
		s.problem(lit.Pos(), "condition literal without Type or Reason")
		return
	}
	s.addConditions(p, typ, reason)
}

// conditionAssignment records `c.Reason = …` on a condition variable initialised by a literal.
func (s *scanner) conditionAssignment(p *packages.Package, as *ast.AssignStmt) {
	for i, lhs := range as.Lhs {
		sel, ok := lhs.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Reason" || !isCondition(p.TypesInfo.TypeOf(sel.X)) {
			continue
		}
		if len(as.Lhs) != len(as.Rhs) {
			s.problem(as.Pos(), "condition reason assigned from a call with several results")
			continue
		}
		base, ok := ast.Unparen(sel.X).(*ast.Ident)
		var lit *ast.CompositeLit
		if ok {
			lit = s.initialLiteral(p, p.TypesInfo.ObjectOf(base), as.Pos())
		}
		if lit == nil || fieldValue(lit, "Type") == nil {
			s.problem(as.Pos(), "condition reason set on a condition whose type cannot be read")
			continue
		}
		s.addConditions(p, fieldValue(lit, "Type"), as.Rhs[i])
	}
}

func (s *scanner) addConditions(p *packages.Package, typ, reason ast.Expr) {
	kinds, ok1 := s.values(p, typ, 0)
	reasons, ok2 := s.values(p, reason, 0)
	if !ok1 || !ok2 {
		return
	}
	for _, t := range kinds {
		for _, r := range reasons {
			s.facts.conditions[conditionReason{t, r}] = true
		}
	}
}

// initialLiteral is the composite literal a variable was last set to before pos (a condition
// variable is built from a literal, then its reason changed).
func (s *scanner) initialLiteral(p *packages.Package, v types.Object, pos token.Pos) *ast.CompositeLit {
	var lit *ast.CompositeLit
	for _, f := range p.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != len(as.Rhs) || as.Pos() >= pos {
				return true
			}
			for i, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok && p.TypesInfo.ObjectOf(id) == v {
					if c, ok := ast.Unparen(as.Rhs[i]).(*ast.CompositeLit); ok && (lit == nil || c.Pos() > lit.Pos()) {
						lit = c
					}
				}
			}
			return true
		})
	}
	return lit
}

// fieldValue is the value of a keyed field of a composite literal.
func fieldValue(lit *ast.CompositeLit, field string) ast.Expr {
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == field {
				return kv.Value
			}
		}
	}
	return nil
}
