package measurements

import (
	"context"
	"time"
)

func init() { Register("Sleep", Informational, func(string) Measurement { return &sleep{} }) }

// sleep waits for params.duration: configs use it to let the cluster settle
// between steps.
type sleep struct{}

func (*sleep) Execute(ctx context.Context, _ *Env, params Params) ([]Summary, error) {
	d, err := params.Duration("duration", 0)
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
