// Added for the embedded gateway (see embedded-db/README.md): the fields the store declares
// scalar. A generic FerretDB cannot know that a field is never an array or of mixed types, so
// it cannot put sorts, limits or counts into SQL, nor serve them from an index; the store
// can, and tells the database once, at start.

package metadata

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sync"
)

// ScalarType is the one type a declared field has when present and not null.
type ScalarType string

// The declarable types; all of them compare in SQL exactly as MongoDB compares them within
// the type, once the field is extracted with `->>` (an SQL value, not JSON text).
const (
	ScalarString ScalarType = "string" // UTF-8 text: SQLite's BINARY order is MongoDB's
	ScalarDate   ScalarType = "date"   // stored by sjson as milliseconds since the epoch
	ScalarNumber ScalarType = "number" // int32, int64 or a finite double
	ScalarBool   ScalarType = "bool"   // false < true, as 0 < 1
)

// ScalarFieldsEnv names the environment variable the declarations come in (embedded-db's
// main sets it from its --scalar-fields flag): JSON, collection name → field → type.
const ScalarFieldsEnv = "EMBEDDED_DB_SCALAR_FIELDS"

var (
	scalarsOnce sync.Once
	scalars     map[string]map[string]ScalarType
	scalarsErr  error
)

// scalarFieldName matches the top-level field names that can be declared: plain names, no
// paths, so they go into SQL paths unquoted.
var scalarFieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseScalarFields checks a declaration.
func ParseScalarFields(text string) (map[string]map[string]ScalarType, error) {
	res := map[string]map[string]ScalarType{}
	if text == "" {
		return res, nil
	}

	if err := json.Unmarshal([]byte(text), &res); err != nil {
		return nil, fmt.Errorf("scalar fields: %w", err)
	}

	for coll, fields := range res {
		for field, t := range fields {
			if !scalarFieldName.MatchString(field) || field == "_id" {
				return nil, fmt.Errorf("scalar fields: %s.%q cannot be declared", coll, field)
			}

			switch t {
			case ScalarString, ScalarDate, ScalarNumber, ScalarBool:
			default:
				return nil, fmt.Errorf("scalar fields: %s.%s has unknown type %q", coll, field, t)
			}
		}
	}

	return res, nil
}

// ScalarFields returns the declared fields of a collection (any database), or nil.
func ScalarFields(collection string) map[string]ScalarType {
	scalarsOnce.Do(func() {
		scalars, scalarsErr = ParseScalarFields(os.Getenv(ScalarFieldsEnv))
		if scalarsErr != nil {
			panic(scalarsErr) // main checked the same text before starting
		}
	})

	return scalars[collection]
}

// ScalarColumn is the SQL value of a declared field: the expression its indexes are built on
// and its pushed conditions and sorts are written with, so SQLite uses one for the other.
func ScalarColumn(field string) string {
	return DefaultColumn + `->>'$.` + field + `'`
}
