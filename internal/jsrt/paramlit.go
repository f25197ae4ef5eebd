package jsrt

import (
	"math"
	"reflect"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
)

// JavaScript has one number type, so `devfactor: 2.0` and `devfactor: 2` are the same value
// once evaluated. Backtrader users (whose conventions the service follows) mean a float by the
// first, as Python does; so a parameter's type is read from the number literal as written in
// the source, where the evaluated default is a whole number.

// numberLiteral is a number written in a params declaration of the source.
type numberLiteral struct {
	owner string // the class (or object) the params belong to, "" when unknown
	key   string
	value float64
	float bool // written as a Python float would be: a decimal point or an exponent
}

// paramLiterals are the number literals of a source's params declarations, in source order.
type paramLiterals []numberLiteral

// writtenFloat reports whether the default value of owner's parameter key was written as a
// float literal. The owner's own declarations decide when they hold the value; otherwise any
// params declaration in the source that writes this value for this key (a base class's, or one
// spread or merged into the params) does.
func (ls paramLiterals) writtenFloat(owner, key string, value float64) bool {
	found, float := false, false
	for _, l := range ls {
		if l.owner == owner && l.key == key && l.value == value {
			found, float = true, l.float // a later declaration (X.params = …) overrides
		}
	}
	if found {
		return float
	}
	for _, l := range ls {
		if l.key == key && l.value == value && l.float {
			return true
		}
	}
	return false
}

// isFloatLiteral applies Python's rule to a JavaScript number literal: decimal digits with a
// point or an exponent (2.0, 2., .5, 1e3) make a float; integers, hexadecimal, octal and binary
// literals an int.
func isFloatLiteral(lit string) bool {
	lit = strings.ToLower(lit)
	if strings.HasPrefix(lit, "0x") || strings.HasPrefix(lit, "0o") || strings.HasPrefix(lit, "0b") || strings.HasSuffix(lit, "n") {
		return false
	}
	return strings.ContainsAny(lit, ".e")
}

// scanParamLiterals finds the params declarations of a parsed source — a class's
// `static params = …` field or `static get params()` getter, and an assignment
// `X.params = …` — and the number literals written as values of their keys, however the
// declaration builds its object (literal, spread, Object.assign); and those of object
// literals bound to a name (`const defaults = {…}`), which params may spread.
func scanParamLiterals(prg *ast.Program) paramLiterals {
	var out paramLiterals
	var visit func(v reflect.Value, hint string)
	visit = func(v reflect.Value, hint string) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			switch n := v.Interface().(type) {
			case *ast.ClassLiteral:
				name := hint
				if n.Name != nil {
					name = n.Name.Name.String()
				}
				for _, el := range n.Body {
					switch e := el.(type) {
					case *ast.FieldDefinition:
						if e.Static && !e.Computed && isParamsKey(e.Key) {
							out = append(out, collectNumbers(e.Initializer, name)...)
						}
					case *ast.MethodDefinition:
						if e.Static && !e.Computed && e.Kind == ast.PropertyKindGet && isParamsKey(e.Key) {
							out = append(out, collectNumbers(e.Body, name)...)
						}
					}
				}
			case *ast.Binding:
				// const defaults = { … }: may be spread or assigned into params
				if o, ok := n.Initializer.(*ast.ObjectLiteral); ok {
					out = append(out, collectNumbers(o, "")...)
				}
				// const X = class extends Strategy {…}: the class is named X
				if id, ok := n.Target.(*ast.Identifier); ok {
					visit(reflect.ValueOf(n.Initializer), id.Name.String())
					return
				}
			case *ast.AssignExpression:
				if owner, ok := paramsTarget(n.Left); ok && n.Operator == token.ASSIGN {
					out = append(out, collectNumbers(n.Right, owner)...)
				}
				if id, ok := n.Left.(*ast.Identifier); ok {
					visit(reflect.ValueOf(n.Right), id.Name.String())
					return
				}
			}
			visit(v.Elem(), "")
		case reflect.Struct:
			if v.Type().PkgPath() != astPkgPath {
				return // positions, names and the file's source map: no nodes below
			}
			for i := 0; i < v.NumField(); i++ {
				visit(v.Field(i), "")
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				visit(v.Index(i), "")
			}
		}
	}
	visit(reflect.ValueOf(prg), "")
	return out
}

var astPkgPath = reflect.TypeOf(ast.Program{}).PkgPath()

func isParamsKey(e ast.Expression) bool {
	switch k := e.(type) {
	case *ast.StringLiteral:
		return k.Value.String() == "params"
	case *ast.Identifier:
		return k.Name.String() == "params"
	}
	return false
}

// paramsTarget recognises X.params and X["params"] and returns X's name ("" when X is not a
// plain name).
func paramsTarget(e ast.Expression) (string, bool) {
	var obj ast.Expression
	switch t := e.(type) {
	case *ast.DotExpression:
		if t.Identifier.Name.String() != "params" {
			return "", false
		}
		obj = t.Left
	case *ast.BracketExpression:
		if !isParamsKey(t.Member) {
			return "", false
		}
		obj = t.Left
	default:
		return "", false
	}
	if id, ok := obj.(*ast.Identifier); ok {
		return id.Name.String(), true
	}
	return "", true
}

// collectNumbers returns the keyed number literals (`key: 2.0`, `key: -2.0`) anywhere in n.
func collectNumbers(n ast.Node, owner string) paramLiterals {
	var out paramLiterals
	var visit func(v reflect.Value)
	visit = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if p, ok := v.Interface().(*ast.PropertyKeyed); ok && !p.Computed {
				if key, ok := p.Key.(*ast.StringLiteral); ok {
					if val, lit, ok := numberOf(p.Value); ok {
						out = append(out, numberLiteral{owner: owner, key: key.Value.String(), value: val, float: isFloatLiteral(lit)})
					}
				}
			}
			visit(v.Elem())
		case reflect.Struct:
			if v.Type().PkgPath() != astPkgPath {
				return
			}
			for i := 0; i < v.NumField(); i++ {
				visit(v.Field(i))
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				visit(v.Index(i))
			}
		}
	}
	visit(reflect.ValueOf(n))
	return out
}

// numberOf returns the value and literal text of a number literal, signed or not.
func numberOf(e ast.Expression) (float64, string, bool) {
	sign := 1.0
	for {
		u, ok := e.(*ast.UnaryExpression)
		if !ok || u.Postfix || (u.Operator != token.MINUS && u.Operator != token.PLUS) {
			break
		}
		if u.Operator == token.MINUS {
			sign = -sign
		}
		e = u.Operand
	}
	n, ok := e.(*ast.NumberLiteral)
	if !ok {
		return 0, "", false
	}
	switch x := n.Value.(type) {
	case int64:
		return sign * float64(x), n.Literal, true
	case float64:
		if math.IsNaN(x) {
			return 0, "", false
		}
		return sign * x, n.Literal, true
	}
	return 0, "", false
}

// forOwner binds writtenFloat to one class.
func (ls paramLiterals) forOwner(owner string) func(key string, value float64) bool {
	return func(key string, value float64) bool { return ls.writtenFloat(owner, key, value) }
}
