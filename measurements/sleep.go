package measurements

import (
	"context"
	"time"
)

func init() { Register("Sleep", func() Measurement { return &sleep{} }) }

// sleep waits for params.duration: configs use it to let the cluster settle
// between steps.
type sleep struct{}

func (*sleep) Execute(ctx context.Context, params Params) error {
	d, err := params.Duration("duration", 0)
	if err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
