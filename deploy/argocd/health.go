// Package argocd holds the Argo CD health check (Lua) for the operator's
// two custom resources and runs it the way Argo CD does, for tests.
package argocd

import (
	_ "embed"
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// HealthLua is health.lua: the script of argocd-cm's
// resource.customizations for upgrades.lunadas.dev/ApplicationUpgrade and
// upgrade.starlingx.io/Upgrade (argocd-cm.yaml holds the same text).
//
//go:embed health.lua
var HealthLua string

// Health runs script as Argo CD's resource health Lua does
// (argoproj/argo-cd util/lua: a fresh gopher-lua state, the object as the
// global table obj, the returned table's status and message) on obj, an
// object as the API server returns it (JSON-decoded).
func Health(script string, obj map[string]any) (status, message string, err error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: false})
	defer l.Close()
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		return "", "", fmt.Errorf("run the health script: %w", err)
	}
	t, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("the health script returned %s, not a table", l.Get(-1).Type())
	}
	return lua.LVAsString(t.RawGetString("status")), lua.LVAsString(t.RawGetString("message")), nil
}

// toLua converts JSON-decoded values (maps, slices, strings, float64 or
// int64 numbers, bools) into Lua values, as Argo CD's decodeValue does.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := l.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(l, e))
		}
		return t
	case []any:
		t := l.NewTable()
		for _, e := range v {
			t.Append(toLua(l, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	default:
		return lua.LString(fmt.Sprint(v))
	}
}
