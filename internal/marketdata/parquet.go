package marketdata

import (
	"fmt"
	"io"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/tabular"
)

// ParquetContentType is the media type of a Parquet bars file.
const ParquetContentType = tabular.ParquetContentType

// ParseParquet reads a Parquet bars file (tabular.ReadBars: datetime or date, open, high,
// low, close, volume). A file that is not Parquet, or lacks or mistypes a column, is a 400
// saying so; rows that are not bars the import takes (a null, prices that are not positive,
// high below low, times out of range or not ascending: the rules every import checks) are a
// 400 listing each by its 1-based row, as CSV lists its lines. Nothing is imported then.
func ParseParquet(r io.Reader, loc *time.Location) ([]engine.Bar, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read Parquet: %w", err)
	}
	bars, problems, err := tabular.ReadBars(data, loc)
	if err != nil {
		return nil, apperr.Invalid("Invalid Parquet: %v", err)
	}
	var bad []apperr.LineError
	next := 0 // the next of problems
	for i := range bars {
		msg := ""
		if next < len(problems) && problems[next].Row == i+1 {
			msg = problems[next].Msg
			next++
		} else if i > 0 && next > 0 && problems[next-1].Row == i {
			// The row before holds no bar: order is checked against the last good one only
			// by the import of a fixed file, so only this row's own rules here.
			msg = barProblem([]engine.Bar{bars[i]}, 0)
		} else {
			msg = barProblem(bars, i)
		}
		if msg != "" {
			bad = append(bad, apperr.LineError{Line: i + 1, Message: msg})
			if len(bad) == MaxReportedLines {
				break
			}
		}
	}
	if len(bad) == 0 {
		return bars, nil
	}
	detail := fmt.Sprintf("Invalid Parquet at row %d: %s", bad[0].Line, bad[0].Message)
	switch n := len(bad); {
	case n == MaxReportedLines:
		detail += fmt.Sprintf(" (and more: the first %d bad rows are listed)", n)
	case n > 1:
		detail += fmt.Sprintf(" (%d bad rows in all)", n)
	}
	return nil, &apperr.Error{Kind: apperr.KindInvalid, Detail: detail, Lines: bad}
}
