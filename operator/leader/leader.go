// Package leader is the check a reconciler makes before it writes, that
// this replica still holds the leader-election Lease (manager.LeaseGuard
// answers it from the process's last own renewal). Both controllers, the
// ApplicationUpgrade and the platform Upgrade, stop a pass the same way.
package leader

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Retry is when a pass stopped by the check is tried again: by then
// client-go's elector has renewed the Lease (it retries every 2 s) or
// stepped down and the process has exited.
const Retry = time.Second

// Check calls held (nil: leader election is off, every pass may write) and
// returns its error, logged once with the reason and the retry: the caller
// stops its pass without writing and requeues after Retry.
func Check(ctx context.Context, held func() error) error {
	if held == nil {
		return nil
	}
	err := held()
	if err != nil {
		log.FromContext(ctx).Info("not writing: the leader-election Lease may have passed to another replica", "reason", err.Error(), "retry", Retry.String())
	}
	return err
}
