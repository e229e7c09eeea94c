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
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/packages"
)

// maxDepth bounds how far a value is followed through variables, parameters and fields.
const maxDepth = 8

func constString(v constant.Value) string {
	if v.Kind() == constant.String {
		return constant.StringVal(v)
	}
	return v.ExactString()
}

// values is every string constant an expression can evaluate to: a constant, or a variable,
// parameter or struct field followed to every value assigned to it in the module. What cannot
// be followed is a problem, never a silent gap.
func (s *scanner) values(p *packages.Package, e ast.Expr, depth int) ([]string, bool) {
	if tv, ok := p.TypesInfo.Types[e]; ok && tv.Value != nil {
		return []string{constString(tv.Value)}, true
	}
	if depth > maxDepth {
		s.problem(e.Pos(), "value followed too far")
		return nil, false
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.CallExpr: // a conversion such as string(reason)
		if tv := p.TypesInfo.Types[e.Fun]; tv.IsType() && len(e.Args) == 1 {
			return s.values(p, e.Args[0], depth+1)
		}
	case *ast.Ident:
		if v, ok := p.TypesInfo.Uses[e].(*types.Var); ok {
			return s.varValues(v, e.Pos(), depth)
		}
	case *ast.SelectorExpr:
		if v, ok := p.TypesInfo.Uses[e.Sel].(*types.Var); ok {
			return s.varValues(v, e.Pos(), depth)
		}
	}
	s.problem(e.Pos(), "not a constant, a variable, a parameter or a field")
	return nil, false
}

// varValues follows a variable: a parameter to the arguments of every call of its function, a
// struct field to every literal and assignment that sets it, any other variable to its
// assignments.
func (s *scanner) varValues(v *types.Var, pos token.Pos, depth int) ([]string, bool) {
	var exprs []found
	switch {
	case v.IsField():
		exprs = s.fieldSetters(v)
	case s.paramOf(v) != nil:
		exprs = s.arguments(v)
	default:
		exprs = s.assignments(v)
	}
	if len(exprs) == 0 {
		s.problem(pos, "%s is never set from a value this test can read", v.Name())
		return nil, false
	}
	var out []string
	for _, x := range exprs {
		if x.expr == nil {
			s.problem(x.pos, "%s is set from a call with several results", v.Name())
			return nil, false
		}
		vals, ok := s.values(x.pkg, x.expr, depth+1)
		if !ok {
			return nil, false
		}
		for _, val := range vals {
			if !slices.Contains(out, val) {
				out = append(out, val)
			}
		}
	}
	return out, true
}

// found is an expression a variable is set from, in its package.
type found struct {
	pkg  *packages.Package
	expr ast.Expr // nil: set from a multi-valued call
	pos  token.Pos
}

// each calls fn for every node of every scanned file.
func (s *scanner) each(fn func(p *packages.Package, n ast.Node)) {
	for _, p := range s.pkgs {
		for _, f := range p.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				if n != nil {
					fn(p, n)
				}
				return true
			})
		}
	}
}

// paramOf is the declared function or method whose parameter v is.
func (s *scanner) paramOf(v *types.Var) *types.Func {
	var fn *types.Func
	s.each(func(p *packages.Package, n ast.Node) {
		decl, ok := n.(*ast.FuncDecl)
		if !ok || fn != nil {
			return
		}
		f, _ := p.TypesInfo.Defs[decl.Name].(*types.Func)
		if f == nil {
			return
		}
		params := f.Type().(*types.Signature).Params()
		for p := range params.Variables() {
			if p == v {
				fn = f
			}
		}
	})
	return fn
}

// arguments are the values passed for parameter v at every call of its function.
func (s *scanner) arguments(v *types.Var) []found {
	fn := s.paramOf(v)
	sig := fn.Type().(*types.Signature)
	idx := -1
	for i := range sig.Params().Len() {
		if sig.Params().At(i) == v {
			idx = i
		}
	}
	var out []found
	s.each(func(p *packages.Package, n ast.Node) {
		call, ok := n.(*ast.CallExpr)
		if !ok || calleeFunc(p.TypesInfo, call) != fn {
			return
		}
		if idx >= len(call.Args) || (sig.Variadic() && idx == sig.Params().Len()-1) {
			out = append(out, found{pkg: p, pos: call.Pos()})
			return
		}
		out = append(out, found{pkg: p, expr: call.Args[idx], pos: call.Pos()})
	})
	return out
}

// assignments are the values a (non-field, non-parameter) variable is declared or assigned with.
func (s *scanner) assignments(v *types.Var) []found {
	var out []found
	s.each(func(p *packages.Package, n ast.Node) {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok && p.TypesInfo.ObjectOf(id) == v {
					out = append(out, rhs(p, n.Rhs, len(n.Lhs), i, n.Pos()))
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if p.TypesInfo.Defs[id] == v && len(n.Values) > 0 {
					out = append(out, rhs(p, n.Values, len(n.Names), i, n.Pos()))
				}
			}
		}
	})
	return out
}

// fieldSetters are the values a struct field is set to, in literals (keyed or positional) and
// assignments.
func (s *scanner) fieldSetters(field *types.Var) []found {
	var out []found
	s.each(func(p *packages.Package, n ast.Node) {
		switch n := n.(type) {
		case *ast.CompositeLit:
			st, ok := p.TypesInfo.TypeOf(n).Underlying().(*types.Struct)
			if !ok {
				return
			}
			for i, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok && p.TypesInfo.Uses[id] == field {
						out = append(out, found{pkg: p, expr: kv.Value, pos: kv.Pos()})
					}
				} else if i < st.NumFields() && st.Field(i) == field {
					out = append(out, found{pkg: p, expr: el, pos: el.Pos()})
				}
			}
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if sel, ok := l.(*ast.SelectorExpr); ok && p.TypesInfo.Uses[sel.Sel] == field {
					out = append(out, rhs(p, n.Rhs, len(n.Lhs), i, n.Pos()))
				}
			}
		}
	})
	return out
}

func rhs(p *packages.Package, values []ast.Expr, lhs, i int, pos token.Pos) found {
	if len(values) != lhs {
		return found{pkg: p, pos: pos}
	}
	return found{pkg: p, expr: values[i], pos: pos}
}

// strings is the list of string constants a []string expression holds: a literal, a variable
// set from one, append of such, or nil.
func (s *scanner) strings(p *packages.Package, e ast.Expr, depth int) ([]string, bool) {
	if depth > maxDepth {
		s.problem(e.Pos(), "list followed too far")
		return nil, false
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.CompositeLit:
		var out []string
		for _, el := range e.Elts {
			v, ok := s.values(p, el, depth+1)
			if !ok || len(v) != 1 {
				s.problem(el.Pos(), "list element is not one constant")
				return nil, false
			}
			out = append(out, v[0])
		}
		return out, true
	case *ast.Ident:
		if e.Name == "nil" {
			return nil, true
		}
		v, ok := p.TypesInfo.Uses[e].(*types.Var)
		if ok {
			if set := s.assignments(v); len(set) == 1 && set[0].expr != nil {
				return s.strings(set[0].pkg, set[0].expr, depth+1)
			}
		}
	case *ast.CallExpr:
		fn, _ := ast.Unparen(e.Fun).(*ast.Ident)
		if b, ok := p.TypesInfo.Uses[fn].(*types.Builtin); ok && fn != nil && b.Name() == "append" {
			out, ok := s.strings(p, e.Args[0], depth+1)
			if !ok {
				return nil, false
			}
			for i, a := range e.Args[1:] {
				var more []string
				if e.Ellipsis.IsValid() && i == len(e.Args)-2 {
					more, ok = s.strings(p, a, depth+1)
				} else if v, ok2 := s.values(p, a, depth+1); ok2 && len(v) == 1 {
					more, ok = v, true
				} else {
					ok = false
				}
				if !ok {
					return nil, false
				}
				out = append(out, more...)
			}
			return out, true
		}
	}
	s.problem(e.Pos(), "not a list of constants")
	return nil, false
}
