package agent

import (
	"context"
	"time"
)

// runKeyring makes the keyring's first root key when this server becomes
// leader and the keyring has none (the leader makes the key material and
// writes it through Raft; see httpapi's ensureRootKey). A failure is
// retried a few times; the first variable write or identity would make
// the key otherwise.
func (a *Agent) runKeyring(ctx context.Context) {
	for try := 0; try < 5; try++ {
		err := a.api.EnsureKeyring(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		a.logger.Warn("keyring: making the first root key", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}
