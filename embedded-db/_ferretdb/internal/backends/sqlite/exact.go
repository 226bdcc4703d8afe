// Added for the embedded gateway (see embedded-db/README.md): queries that run whole in SQL.

package sqlite

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/handler/sjson"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/iterator"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// exact is a query's SQL when it selects exactly the documents the filter matches.
type exact struct {
	where   string // "" or " WHERE ..."
	args    []any
	orderBy string // the asked sort when sorted, else table order (the order Go would see)
	sorted  bool   // orderBy is the asked sort (or none was asked), so a limit may follow

	// keys, when set, selects the same documents from terms indexes' keys alone: every
	// condition of the filter and every sort field is a column of those keys (keys.go).
	keys *keysQuery
}

// exactScope is what translating a filter of one collection needs: its declaration, its
// terms indexes (metadata/terms.go), and the equalities the whole filter requires of
// declared string fields, which a terms condition adds to its search of a keys' table so
// that the search starts at the tenant's keys.
type exactScope struct {
	declared map[string]metadata.ScalarType
	terms    []*metadata.TermsIndex
	equal    map[string]string

	// columns, when set, are the only fields a condition may name, each by its column of a
	// terms index's keys (keys.go): the filter is translated onto that table.
	columns map[string]string
}

// newExactScope reads the collection's terms indexes and the filter's top-level equalities.
func newExactScope(meta *metadata.Collection, declared map[string]metadata.ScalarType, filter *types.Document) *exactScope {
	s := &exactScope{declared: declared, equal: map[string]string{}}

	if meta != nil {
		for _, index := range meta.Settings.Indexes {
			if t, ok := metadata.TermsIndexOf(meta.TableName, index, declared); ok {
				s.terms = append(s.terms, t)
			}
		}
	}

	s.addEqualities(filter)

	return s
}

// addEqualities notes `{field: "string"}` and `{field: {$eq: "string"}}` of declared string
// fields, at the top level of filter or of a top-level `$and`.
func (s *exactScope) addEqualities(filter *types.Document) {
	if filter == nil {
		return
	}

	for _, key := range filter.Keys() {
		value := must.NotFail(filter.Get(key))

		if key == "$and" {
			for _, clause := range andFilters(value) {
				s.addEqualities(clause)
			}

			continue
		}

		if s.declared[key] != metadata.ScalarString {
			continue
		}

		if d, ok := value.(*types.Document); ok && d.Len() == 1 {
			value, _ = d.Get("$eq")
		}

		if v, ok := value.(string); ok {
			s.equal[key] = v
		}
	}
}

// andFilters is the filters a `$and` value holds: its elements that are documents. The
// callers only narrow the SQL's selection; Go filtering still judges any other element.
func andFilters(value any) []*types.Document {
	clauses, ok := value.(*types.Array)
	if !ok {
		return nil
	}

	var res []*types.Document

	for i := 0; i < clauses.Len(); i++ {
		if clause, ok := must.NotFail(clauses.Get(i)).(*types.Document); ok {
			res = append(res, clause)
		}
	}

	return res
}

// exactQuery returns the SQL of a query on a declared collection when every field its filter
// and sort touch is declared scalar (metadata/scalars.go) and every operator is one SQL
// evaluates as MongoDB does on such fields. Because the collection only holds documents that
// keep the declaration (checkDeclared), that SQL selects exactly the matching documents, in
// MongoDB's order for the sort; the handler still filters, sorts and limits them in Go.
// Any other query returns false and runs as upstream.
func exactQuery(collection string, meta *metadata.Collection, filter, naturalSort, sort *types.Document) (*exact, bool) {
	declared := metadata.ScalarFields(collection)
	if declared == nil || meta.Capped() || naturalSort.Len() != 0 {
		return nil, false
	}

	scope := newExactScope(meta, declared, filter)

	condition, args, ok := exactFilter(filter, scope)
	if !ok {
		return nil, false
	}

	res := &exact{args: args, orderBy: " ORDER BY rowid", sorted: true}
	if condition != "" {
		res.where = " WHERE " + condition
	}

	if k, ok := scope.coveredKeys(filter, sort); ok {
		res.keys = k
	}

	if sort.Len() == 0 {
		return res, true
	}

	terms := make([]string, 0, sort.Len())

	for _, key := range sort.Keys() {
		column, ok := exactColumn(key, scope)
		if !ok {
			res.sorted = false
			return res, true
		}

		switch must.NotFail(sort.Get(key)) {
		case int64(1):
			terms = append(terms, column)
		case int64(-1):
			terms = append(terms, column+" DESC")
		default:
			res.sorted = false
			return res, true
		}
	}

	// SQLite orders NULL (a null or missing field) before every value, as MongoDB does.
	res.orderBy = " ORDER BY " + strings.Join(terms, ", ")

	return res, true
}

// exactColumn is the SQL value of a declared scalar field (an `_id` of a declared
// collection is a string: checkDeclared). A terms field has none (an array).
func exactColumn(key string, scope *exactScope) (string, bool) {
	if scope.columns != nil {
		column, ok := scope.columns[key]
		return column, ok
	}

	if key == "_id" {
		return metadata.ScalarColumn("_id"), true
	}

	if t, ok := scope.declared[key]; !ok || t == metadata.ScalarTerms {
		return "", false
	}

	return metadata.ScalarColumn(key), true
}

// necessaryConditions are, for a query on a declared collection that exactQuery cannot run
// whole, the exact conditions of its top-level parts (also inside `$and`) that have one, and
// upstream's for the others (pushdownConditions): SQL selects a superset of the matches,
// through the declared indexes where those conditions reach them, and Go filters it.
func necessaryConditions(meta *metadata.Collection, filter *types.Document, declared map[string]metadata.ScalarType) ([]string, []any) {
	return newExactScope(meta, declared, filter).necessary(filter)
}

func (scope *exactScope) necessary(filter *types.Document) ([]string, []any) {
	var conditions []string
	var args []any

	for _, key := range filter.Keys() {
		value := must.NotFail(filter.Get(key))

		if key == "$and" {
			for _, clause := range andFilters(value) {
				c, a := scope.necessary(clause)
				conditions = append(conditions, c...)
				args = append(args, a...)
			}

			continue
		}

		var c string
		var a []any
		var ok bool

		if key == "$or" {
			c, a, ok = exactClauses(key, value, scope)
		} else {
			c, a, ok = exactField(key, value, scope)
		}

		if ok {
			if c != "" {
				conditions = append(conditions, c)
				args = append(args, a...)
			}

			continue
		}

		c2, a2 := pushdownConditions(must.NotFail(types.NewDocument(key, value)))
		conditions = append(conditions, c2...)
		args = append(args, a2...)
	}

	return conditions, args
}

// exactFilter returns a condition ("" for none) true of exactly the documents filter matches.
func exactFilter(filter *types.Document, scope *exactScope) (string, []any, bool) {
	if filter.Len() == 0 {
		return "", nil, true
	}

	var conditions []string
	var args []any

	for _, key := range filter.Keys() {
		value := must.NotFail(filter.Get(key))

		var c string
		var a []any
		var ok bool

		switch key {
		case "$and", "$or":
			c, a, ok = exactClauses(key, value, scope)
		default:
			c, a, ok = exactField(key, value, scope)
		}

		if !ok {
			return "", nil, false
		}

		if c != "" {
			conditions = append(conditions, c)
			args = append(args, a...)
		}
	}

	return strings.Join(conditions, " AND "), args, true
}

// exactClauses translates `$and` or `$or` of a non-empty array of filters.
func exactClauses(op string, value any, scope *exactScope) (string, []any, bool) {
	clauses, ok := value.(*types.Array)
	if !ok || clauses.Len() == 0 {
		return "", nil, false
	}

	parts := make([]string, 0, clauses.Len())

	var args []any

	for i := 0; i < clauses.Len(); i++ {
		clause, ok := must.NotFail(clauses.Get(i)).(*types.Document)
		if !ok {
			return "", nil, false
		}

		c, a, ok := exactFilter(clause, scope)
		if !ok {
			return "", nil, false
		}

		if c == "" {
			if op == "$or" {
				return "", nil, true // a branch matching everything
			}

			continue
		}

		parts = append(parts, "("+c+")")
		args = append(args, a...)
	}

	if op == "$or" {
		return "(" + strings.Join(parts, " OR ") + ")", args, true
	}

	return strings.Join(parts, " AND "), args, true
}

// exactField translates `{key: value}`: an equality, or an operator document.
func exactField(key string, value any, scope *exactScope) (string, []any, bool) {
	if strings.HasPrefix(key, "$") {
		return "", nil, false
	}

	if scope.declared[key] == metadata.ScalarTerms {
		if scope.columns != nil {
			return "", nil, false // on a keys table, the term is the table's own condition
		}

		return scope.termsField(key, value)
	}

	column, ok := exactColumn(key, scope)
	if !ok {
		return "", nil, false
	}

	t := scope.declared[key]
	if key == "_id" && scope.columns != nil {
		t = metadata.ScalarString // a key column holds the `_id` string's SQL value
	} else if key == "_id" {
		if c, a, ok := exactID(value); ok {
			return c, a, true
		}

		t = metadata.ScalarString
	}

	return exactCondition(column, t, value)
}

// exactCondition translates `value` (an equality or an operator document) on the SQL value
// column of a field of type t.
func exactCondition(column string, t metadata.ScalarType, value any) (string, []any, bool) {
	var ok bool

	operators, isDoc := value.(*types.Document)
	if !isDoc || operators.Len() == 0 || !strings.HasPrefix(operators.Keys()[0], "$") {
		return exactEquality(column, t, value)
	}

	conditions := make([]string, 0, operators.Len())

	var args []any

	for _, op := range operators.Keys() {
		operand := must.NotFail(operators.Get(op))

		var c string
		var a []any

		switch op {
		case "$eq":
			c, a, ok = exactEquality(column, t, operand)
		case "$ne":
			c, a, ok = exactEquality(column, t, operand)
			if ok {
				if a == nil {
					c = column + " IS NOT NULL"
				} else {
					c = "(" + column + " IS NULL OR " + column + " <> ?)"
				}
			}
		case "$gt", "$gte", "$lt", "$lte":
			var v any
			if v, ok = sqlValue(t, operand); ok {
				c = column + map[string]string{"$gt": " > ?", "$gte": " >= ?", "$lt": " < ?", "$lte": " <= ?"}[op]
				a = []any{v}
			}
		case "$in":
			c, a, ok = exactIn(column, t, operand)
		default:
			ok = false
		}

		if !ok {
			return "", nil, false
		}

		conditions = append(conditions, c)
		args = append(args, a...)
	}

	return strings.Join(conditions, " AND "), args, true
}

// termsField translates a condition on a declared terms field: `"term"`, `{$eq: "term"}` and
// `{$in: [terms]}` (the array holds one of them), `{$all: [terms]}` (all of them), each a
// search of the field's keys' table for the documents' `_id`s.
func (scope *exactScope) termsField(key string, value any) (string, []any, bool) {
	operators, isDoc := value.(*types.Document)
	if !isDoc {
		return scope.termsSearch(key, []any{value})
	}

	if operators.Len() == 0 {
		return "", nil, false
	}

	conditions := make([]string, 0, operators.Len())

	var args []any

	for _, op := range operators.Keys() {
		operand := must.NotFail(operators.Get(op))

		var parts []string

		switch op {
		case "$eq":
			c, a, ok := scope.termsSearch(key, []any{operand})
			if !ok {
				return "", nil, false
			}

			parts, args = append(parts, c), append(args, a...)
		case "$in", "$all":
			list, ok := operand.(*types.Array)
			if !ok {
				return "", nil, false
			}

			if list.Len() == 0 {
				parts = append(parts, "0") // MongoDB: an empty $in or $all matches nothing
				break
			}

			values := must.NotFail(iterator.ConsumeValues(list.Iterator()))
			if op == "$in" {
				c, a, ok := scope.termsSearch(key, values)
				if !ok {
					return "", nil, false
				}

				parts, args = append(parts, c), append(args, a...)

				break
			}

			for _, v := range values {
				c, a, ok := scope.termsSearch(key, []any{v})
				if !ok {
					return "", nil, false
				}

				parts, args = append(parts, c), append(args, a...)
			}
		default:
			return "", nil, false
		}

		conditions = append(conditions, parts...)
	}

	return strings.Join(conditions, " AND "), args, true
}

// termsSearch is "the array holds one of terms" (strings only: an array holds no other
// type, and null would match a missing field) as a search of a keys' table: the index on
// the field whose leading fields the filter's equalities cover, which they then narrow.
func (scope *exactScope) termsSearch(key string, terms []any) (string, []any, bool) {
	var best *metadata.TermsIndex

	var prefix int

	for _, t := range scope.terms {
		if t.Index.Key[t.Field].Field != key {
			continue
		}

		covered := 0
		for covered < t.Field {
			if _, ok := scope.equal[t.Index.Key[covered].Field]; !ok {
				break
			}

			covered++
		}

		if best == nil || covered > prefix {
			best, prefix = t, covered
		}
	}

	if best == nil {
		return "", nil, false
	}

	var conditions []string
	var args []any

	for i := 0; i < prefix; i++ {
		conditions = append(conditions, metadata.TermsColumn(i)+" = ?")
		args = append(args, scope.equal[best.Index.Key[i].Field])
	}

	for _, term := range terms {
		s, ok := term.(string)
		if !ok {
			return "", nil, false
		}

		args = append(args, s)
	}

	conditions = append(conditions, inList(metadata.TermsColumn(best.Field), len(terms)))

	return fmt.Sprintf(
		"%s IN (SELECT %s FROM %q WHERE %s)",
		metadata.IDColumn, metadata.TermsDocColumn, best.Table, strings.Join(conditions, " AND "),
	), args, true
}

// exactID is an `_id` equality or `$in` of strings on the column the unique `_id` index is
// on: the document's JSON text of the `_id`, which for a string is its one JSON encoding.
func exactID(value any) (string, []any, bool) {
	var ids []any

	switch v := value.(type) {
	case string:
		ids = []any{v}
	case *types.Document:
		if v.Len() != 1 {
			return "", nil, false
		}

		if eq, err := v.Get("$eq"); err == nil {
			ids = []any{eq}
		} else if in, err := v.Get("$in"); err == nil {
			list, ok := in.(*types.Array)
			if !ok || list.Len() == 0 {
				return "", nil, false
			}

			ids = must.NotFail(iterator.ConsumeValues(list.Iterator()))
		}
	}

	if len(ids) == 0 {
		return "", nil, false
	}

	args := make([]any, len(ids))

	for i, id := range ids {
		s, ok := id.(string)
		if !ok {
			return "", nil, false
		}

		args[i] = string(must.NotFail(sjson.MarshalSingleValue(s)))
	}

	return inList(metadata.IDColumn, len(ids)), args, true
}

// inList is `column IN (?, ...)`, a placeholder for each of n values.
func inList(column string, n int) string {
	return column + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// exactEquality is `column = value`, or IS NULL for null (null or missing, as in MongoDB).
func exactEquality(column string, t metadata.ScalarType, value any) (string, []any, bool) {
	if value == types.Null {
		return column + " IS NULL", nil, true
	}

	v, ok := sqlValue(t, value)
	if !ok {
		return "", nil, false
	}

	return column + " = ?", []any{v}, true
}

// exactIn is `$in: [v, ...]`: null in the list also matches null and missing.
func exactIn(column string, t metadata.ScalarType, operand any) (string, []any, bool) {
	list, ok := operand.(*types.Array)
	if !ok {
		return "", nil, false
	}

	if list.Len() == 0 {
		return "0", nil, true
	}

	var args []any
	var null bool

	for i := 0; i < list.Len(); i++ {
		element := must.NotFail(list.Get(i))
		if element == types.Null {
			null = true
			continue
		}

		v, ok := sqlValue(t, element)
		if !ok {
			return "", nil, false
		}

		args = append(args, v)
	}

	var parts []string
	if len(args) > 0 {
		parts = append(parts, inList(column, len(args)))
	}

	if null {
		parts = append(parts, column+" IS NULL")
	}

	return "(" + strings.Join(parts, " OR ") + ")", args, true
}

// sqlValue is a filter's value as SQL sees the stored one, when it is of the field's type
// (another type would compare by MongoDB's type order, which is not pushed).
func sqlValue(t metadata.ScalarType, value any) (any, bool) {
	switch v := value.(type) {
	case string:
		return v, t == metadata.ScalarString
	case time.Time:
		return v.UnixMilli(), t == metadata.ScalarDate
	case bool:
		if t != metadata.ScalarBool {
			return nil, false
		}

		if v {
			return int64(1), true
		}

		return int64(0), true
	case int32:
		return int64(v), t == metadata.ScalarNumber
	case int64:
		return v, t == metadata.ScalarNumber
	case float64:
		return v, t == metadata.ScalarNumber && !math.IsNaN(v) && !math.IsInf(v, 0)
	default:
		return nil, false
	}
}

// checkDeclared refuses a document that breaks its collection's declaration: a declared
// field present, not null, and of another type (an array included), or an `_id` that is not
// a string. A pushed query relies on it (exactQuery), so the write fails loudly instead.
func checkDeclared(collection string, doc *types.Document) error {
	declared := metadata.ScalarFields(collection)
	if declared == nil {
		return nil
	}

	if id, _ := doc.Get("_id"); id != nil {
		if _, ok := id.(string); !ok {
			return lazyerrors.Errorf("embedded-db: %s declares string _id values, got %s", collection, sjsonText(id))
		}
	}

	for field, t := range declared {
		value, err := doc.Get(field)
		if err != nil || value == types.Null {
			continue
		}

		if t == metadata.ScalarTerms {
			if !allStrings(value) {
				return lazyerrors.Errorf(
					"embedded-db: %s.%s is declared %s (an array of strings), got %s", collection, field, t, sjsonText(value),
				)
			}

			continue
		}

		if _, ok := sqlValue(t, value); !ok {
			return lazyerrors.Errorf(
				"embedded-db: %s.%s is declared %s, got %s", collection, field, t, sjsonText(value),
			)
		}
	}

	return nil
}

// allStrings is true of an array of strings (empty included).
func allStrings(value any) bool {
	list, ok := value.(*types.Array)
	if !ok {
		return false
	}

	for i := 0; i < list.Len(); i++ {
		if _, ok := must.NotFail(list.Get(i)).(string); !ok {
			return false
		}
	}

	return true
}

// sjsonText shows a refused value briefly.
func sjsonText(v any) string {
	b, err := sjson.MarshalSingleValue(v)
	if err != nil {
		return fmt.Sprintf("%T", v)
	}

	if len(b) > 80 {
		b = append(b[:77], "..."...)
	}

	return string(b)
}
