package webhook

import (
	"context"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

// SystemInfo tells the webhook the system mode (sysinv's system_mode;
// AIO-SX is simplex), which decides whether rollbackPolicy snapshot is
// allowed. current is the stored `system` Upgrade (nil on create).
type SystemInfo interface {
	SystemMode(ctx context.Context, current *v1alpha1.Upgrade) (v1alpha1.SystemMode, error)
}

// StatusSystemInfo reads status.systemMode of the stored `system` Upgrade,
// which the controller fills from sysinv; "" (unknown) before the first
// observation and on create. It is the default.
type StatusSystemInfo struct{}

// SystemMode implements SystemInfo.
func (StatusSystemInfo) SystemMode(_ context.Context, current *v1alpha1.Upgrade) (v1alpha1.SystemMode, error) {
	if current == nil {
		return "", nil
	}
	return current.Status.SystemMode, nil
}

// StaticSystemInfo is a fixed system mode, e.g. from a manager flag set by
// the Helm chart at application-apply time.
type StaticSystemInfo v1alpha1.SystemMode

// SystemMode implements SystemInfo.
func (s StaticSystemInfo) SystemMode(context.Context, *v1alpha1.Upgrade) (v1alpha1.SystemMode, error) {
	return v1alpha1.SystemMode(s), nil
}
