// Added for the embedded gateway (see embedded-db/README.md): the fields the store declares
// scalar. A generic FerretDB cannot know that a field is never an array or of mixed types, so
// it cannot put sorts, limits or counts into SQL, nor serve them from an index; the store
// can, and tells the database once, at start.

package metadata

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/FerretDB/FerretDB/internal/util/fsql"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
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

	// ScalarTerms is the one array type: an array of strings (a document's analyzed terms).
	// SQL cannot index inside a JSON array, so an index on such a field is a table of its
	// keys, one row per element, kept by triggers (terms.go), as MongoDB keeps a multikey
	// index; a membership condition on it is pushed as a lookup there (exact.go).
	ScalarTerms ScalarType = "terms"
)

// scalars is the declaration, collection name → field → type (DeclareScalarFields).
var scalars map[string]map[string]ScalarType

// scalarFieldName matches the top-level field names that can be declared: plain names, no
// paths, so they go into SQL paths unquoted.
var scalarFieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// DeclareScalarFields checks a declaration (JSON, collection name → field → type) and makes
// it the backend's; embedded-db's main calls it, through package ferretdb, before the
// database starts (so no lock: the goroutines that read it start after).
func DeclareScalarFields(text string) error {
	res := map[string]map[string]ScalarType{}
	if text != "" {
		if err := json.Unmarshal([]byte(text), &res); err != nil {
			return fmt.Errorf("bad --scalar-fields: %w", err)
		}
	}

	for coll, fields := range res {
		for field, t := range fields {
			if !scalarFieldName.MatchString(field) || field == "_id" {
				return fmt.Errorf("bad --scalar-fields: %s.%q cannot be declared", coll, field)
			}

			switch t {
			case ScalarString, ScalarDate, ScalarNumber, ScalarBool, ScalarTerms:
			default:
				return fmt.Errorf("bad --scalar-fields: %s.%s has unknown type %q", coll, field, t)
			}
		}
	}

	scalars = res

	return nil
}

// ScalarFields returns the declared fields of a collection (any database), or nil.
func ScalarFields(collection string) map[string]ScalarType {
	return scalars[collection]
}

// ScalarColumn is the SQL value of a declared field: the expression its indexes are built on
// and its pushed conditions and sorts are written with, so SQLite uses one for the other.
func ScalarColumn(field string) string {
	return DefaultColumn + `->>'$.` + field + `'`
}

// indexStatistics returns the sqlite_stat1 line of an index the store declares on a declared
// collection and leads with the tenant (workspaceId, then usually dataset): an assumed
// million documents, a hundred workspaces of ten datasets each, and every further column a
// hundred times more selective. Without statistics SQLite takes a tenant's prefix for a few
// rows, and serves an $or of keys (an entity's facts as subject or object) by walking the
// whole dataset in the sort's index order rather than by the two key indexes. Only the
// shape matters to the planner; ANALYZE (run by collStats) replaces these with measured ones.
func indexStatistics(index IndexInfo, declared map[string]ScalarType) (string, bool) {
	if declared == nil || len(index.Key) == 0 || index.Key[0].Field != "workspaceId" {
		return "", false
	}

	rows := int64(1_000_000)
	parts := []string{fmt.Sprint(rows)}

	for i := range index.Key {
		switch {
		case i == 0:
			rows /= 10
		case i == 1 && index.Key[1].Field == "dataset":
			rows /= 10
		default:
			rows /= 10_000
		}

		parts = append(parts, fmt.Sprint(max(rows, 1)))
	}

	return strings.Join(parts, " "), true
}

// createIndex creates index of collection c as indexCreateSQL writes it, first dropping
// the existing one of that name when replace is set. An index indexStatistics describes gets
// its statistics in sqlite_stat1 first, so the other connections load them with the schema
// change that creates it; this connection, which adds the index to its schema without
// reading them, reloads them (ANALYZE sqlite_schema). sqlite_stat1 exists once ANALYZE has
// run: on the (small) metadata table, the first time.
func createIndex(ctx context.Context, tx *fsql.Tx, c *Collection, index IndexInfo, replace bool) error {
	declared := ScalarFields(c.Name)
	name := c.TableName + "_" + index.Name
	stat, withStatistics := indexStatistics(index, declared)

	var queries []string
	var args [][]any

	add := func(q string, a ...any) {
		queries = append(queries, q)
		args = append(args, a)
	}

	terms, isTerms := TermsIndexOf(c.TableName, index, declared)

	if replace {
		add(fmt.Sprintf("DROP INDEX IF EXISTS %q", name))

		if isTerms {
			queries = append(queries, terms.dropStatements()...)
			args = append(args, make([][]any, len(terms.dropStatements()))...)
		}
	}

	if withStatistics {
		var exists int

		q := "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat1'"
		if err := tx.QueryRowContext(ctx, q).Scan(&exists); err != nil {
			return lazyerrors.Error(err)
		}

		if exists == 0 {
			add(fmt.Sprintf("ANALYZE %q", metadataTableName))
		}

		if isTerms {
			for _, line := range terms.statistics(c.TableName, declared) {
				add("DELETE FROM sqlite_stat1 WHERE tbl = ? AND idx = ?", line[0], line[1])
				add("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)", line[0], line[1], line[2])
			}
		} else {
			add("DELETE FROM sqlite_stat1 WHERE tbl = ? AND idx = ?", c.TableName, name)
			add("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)", c.TableName, name, stat)
		}
	}

	if isTerms {
		for _, q := range terms.createStatements(c.TableName) {
			add(q)
		}
	} else {
		add(indexCreateSQL(c.TableName, index, declared))
	}

	if withStatistics {
		add("ANALYZE sqlite_schema")
	}

	for i, q := range queries {
		if _, err := tx.ExecContext(ctx, q, args[i]...); err != nil {
			return lazyerrors.Error(err)
		}
	}

	return nil
}

// rebuildStaleIndexes builds again, at start, each index of a declared collection that
// SQLite holds under another definition than the one indexCreateSQL writes now: one made
// before the collection was declared, or before a change to how a declared field's column
// is written. The pushed queries' expressions would not match it, so they would be answered
// right but not from the index. The index keeps its name and FerretDB's metadata; only its
// SQL changes, with its statistics, in one transaction.
func rebuildStaleIndexes(ctx context.Context, db *fsql.DB, c *Collection) error {
	declared := ScalarFields(c.Name)
	if declared == nil {
		return nil
	}

	for _, index := range c.Settings.Indexes {
		if index.Name == "_id_" {
			continue
		}

		name := c.TableName + "_" + index.Name

		var current string

		q := "SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?"
		if err := db.QueryRowContext(ctx, q, name).Scan(&current); err != nil {
			return lazyerrors.Error(err)
		}

		if current == indexCreateSQL(c.TableName, index, declared) {
			continue
		}

		err := db.InTransaction(ctx, func(tx *fsql.Tx) error {
			return createIndex(ctx, tx, c, index, true)
		})
		if err != nil {
			return lazyerrors.Error(err)
		}
	}

	return nil
}
