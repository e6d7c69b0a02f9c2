package advisor

import (
	"fmt"
	"os"
)

// WriteHTMLFile writes the HTML report of r to path.
func WriteHTMLFile(path string, r *Result) error {
	return fmt.Errorf("advisor: --html %s: %w", path, os.ErrInvalid)
}
