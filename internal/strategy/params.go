package strategy

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/jsrt"
)

// MergeParams is the one rule of the parameters a run takes (tasks and studies ask it):
// the strategy's saved values that still fit the version, each on its own (keepFitting),
// overridden by the request's values, which must fit (a 400 naming the parameter). declared
// is the version's parameters as stored, saved the strategy's saved values; the result is
// the coerced values as JSON.
func MergeParams(declared, saved json.RawMessage, in map[string]any) (json.RawMessage, error) {
	var info jsrt.StrategyInfo
	if len(declared) > 0 {
		if err := json.Unmarshal(declared, &info.Params); err != nil {
			return nil, fmt.Errorf("stored strategy params: %w", err)
		}
	}
	var merged map[string]any
	if values, err := decodeValues(saved); err == nil {
		merged = keepFitting(&info, values)
	} else {
		merged = map[string]any{} // saved values that cannot be read are ignored, not fatal
	}
	out, err := jsrt.ValidateParams(&info, in)
	if err != nil {
		return nil, paramError(err)
	}
	for k, v := range out {
		merged[k] = v
	}
	b, err := json.Marshal(merged)
	if err != nil {
		return nil, apperr.Invalid("strategy_params cannot be stored: %v", err)
	}
	return b, nil
}

// paramError is the 400 of parameter values that do not fit their declarations.
func paramError(err error) error {
	var pe *jsrt.ParamError
	if errors.As(err, &pe) {
		return apperr.Invalid("%s", pe.Message)
	}
	return apperr.Invalid("%s", err.Error())
}

// Effective is the one rule of the values a run takes: every parameter declared keeps its
// default unless values (a task's merged parameters, as JSON) gives it another. A task
// records this at submit, so every place that shows a run's parameters (the task, the
// comparison, the results page, the report, the price chart's averages) reads the values
// it ran with, defaults included; migration 00086 filled it in for tasks stored before.
func Effective(declared []jsrt.Param, values json.RawMessage) (json.RawMessage, error) {
	merged := make(map[string]any, len(declared))
	for _, p := range declared {
		if p.Default != nil {
			merged[p.Name] = p.Default
		}
	}
	if len(values) > 0 {
		var given map[string]any
		if err := json.Unmarshal(values, &given); err != nil {
			return nil, fmt.Errorf("strategy params are not an object: %w", err)
		}
		for k, v := range given {
			merged[k] = v
		}
	}
	b, err := json.Marshal(merged)
	if err != nil {
		return nil, apperr.Invalid("strategy_params cannot be stored: %v", err)
	}
	return b, nil
}
