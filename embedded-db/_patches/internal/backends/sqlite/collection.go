// Copyright 2021 FerretDB Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/FerretDB/FerretDB/internal/backends"
	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/handler/sjson"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/fsql"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// collection implements backends.Collection interface.
type collection struct {
	r      *metadata.Registry
	dbName string
	name   string
}

// newCollection creates a new Collection.
func newCollection(r *metadata.Registry, dbName, name string) backends.Collection {
	return backends.CollectionContract(&collection{
		r:      r,
		dbName: dbName,
		name:   name,
	})
}

// Query implements backends.Collection interface.
func (c *collection) Query(ctx context.Context, params *backends.QueryParams) (*backends.QueryResult, error) {
	db := c.r.DatabaseGetExisting(ctx, c.dbName)
	if db == nil {
		return &backends.QueryResult{
			Iter: newQueryIterator(ctx, nil, params.OnlyRecordIDs),
		}, nil
	}

	meta := c.r.CollectionGet(ctx, c.dbName, c.name)
	if meta == nil {
		return &backends.QueryResult{
			Iter: newQueryIterator(ctx, nil, params.OnlyRecordIDs),
		}, nil
	}

	// Patched for the embedded gateway (see embedded-db/README.md): a query that touches only
	// fields the store declares scalar runs whole in SQL, served by the declared indexes:
	// its filter exactly, its sort and limit, or its count.
	if exact, ok := exactQuery(c.name, meta, params.Filter, params.Sort, params.ExactSort); ok {
		if params.CountOnly {
			var count int64

			q := fmt.Sprintf(`SELECT COUNT(*) FROM %q`, meta.TableName) + exact.where
			args := exact.args

			// Patched: a count a terms index's keys answer whole is read from them alone.
			if exact.keys != nil {
				q, args = exact.keys.countSQL(), exact.keys.countArgs
			}

			// Patched: a limited count stops at the limit.
			if params.CountLimit > 0 {
				q, args = limitedCount(q, args, params.CountLimit)
			}

			if err := db.QueryRowContext(ctx, q, args...).Scan(&count); err != nil {
				return nil, lazyerrors.Error(err)
			}

			return &backends.QueryResult{
				Iter:    newQueryIterator(ctx, nil, params.OnlyRecordIDs),
				Counted: true,
				Count:   count,
			}, nil
		}

		limit := params.Limit
		if exact.sorted && params.ExactLimit != 0 {
			limit = params.ExactLimit
		}

		where, args := exact.limitedWhere(limit)
		q := prepareSelectClause(meta.TableName, params.Comment, false, false) + where + exact.orderBy

		if limit != 0 {
			q += ` LIMIT ?`
			args = append(args, limit)
		}

		rows, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, lazyerrors.Error(err)
		}

		return &backends.QueryResult{
			Iter: newQueryIterator(ctx, rows, params.OnlyRecordIDs),
		}, nil
	}

	q := prepareSelectClause(meta.TableName, params.Comment, meta.Capped(), params.OnlyRecordIDs)

	var whereClause string
	var args []any

	// Patched for the embedded gateway (see embedded-db/README.md): every top-level string
	// equality, `$eq` or `$in` of strings, also inside a top-level `$and`, becomes a SQL
	// condition, so only the matching rows are decoded and filtered in Go (the full filter
	// still runs there afterwards). Upstream pushed down a lone `_id` equality only.
	if conditions, conditionArgs := supersetConditions(c.name, meta, params.Filter); len(conditions) > 0 {
		whereClause = ` WHERE ` + strings.Join(conditions, ` AND `)
		args = conditionArgs
	}

	q += whereClause
	q += prepareOrderByClause(params.Sort)

	if params.Limit != 0 {
		q += ` LIMIT ?`
		args = append(args, params.Limit)
	}

	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	return &backends.QueryResult{
		Iter: newQueryIterator(ctx, rows, params.OnlyRecordIDs),
	}, nil
}

// InsertAll implements backends.Collection interface.
func (c *collection) InsertAll(ctx context.Context, params *backends.InsertAllParams) (*backends.InsertAllResult, error) {
	if _, err := c.r.CollectionCreate(ctx, &metadata.CollectionCreateParams{DBName: c.dbName, Name: c.name}); err != nil {
		return nil, lazyerrors.Error(err)
	}

	// Patched (see exactQuery): a declared collection only takes documents that keep its
	// declaration, so a pushed query can never miss one.
	for _, doc := range params.Docs {
		if err := checkDeclared(c.name, doc); err != nil {
			return nil, err
		}
	}

	db := c.r.DatabaseGetExisting(ctx, c.dbName)
	meta := c.r.CollectionGet(ctx, c.dbName, c.name)

	err := db.InTransaction(ctx, func(tx *fsql.Tx) error {
		batchSize := c.r.BatchSize
		if batchSize < 1 {
			panic("batch-size should be greater or equal to 1")
		}

		var batch []*types.Document
		docs := params.Docs

		for len(docs) > 0 {
			i := min(batchSize, len(docs))
			batch, docs = docs[:i], docs[i:]

			q, args, err := prepareInsertStatement(meta.TableName, meta.Capped(), batch)
			if err != nil {
				return lazyerrors.Error(err)
			}

			if _, err = tx.ExecContext(ctx, q, args...); err != nil {
				var se *sqlite3.Error
				if errors.As(err, &se) && se.Code() == sqlite3lib.SQLITE_CONSTRAINT_UNIQUE {
					return backends.NewError(backends.ErrorCodeInsertDuplicateID, err)
				}

				return lazyerrors.Error(err)
			}
		}

		return nil
	})
	if err != nil {
		return nil, err
	}

	return new(backends.InsertAllResult), nil
}

// UpdateAll implements backends.Collection interface.
func (c *collection) UpdateAll(ctx context.Context, params *backends.UpdateAllParams) (*backends.UpdateAllResult, error) {
	var res backends.UpdateAllResult
	db := c.r.DatabaseGetExisting(ctx, c.dbName)
	if db == nil {
		return &res, nil
	}

	meta := c.r.CollectionGet(ctx, c.dbName, c.name)
	if meta == nil {
		return &res, nil
	}

	// Patched: as in InsertAll.
	for _, doc := range params.Docs {
		if err := checkDeclared(c.name, doc); err != nil {
			return nil, err
		}
	}

	q := fmt.Sprintf(`UPDATE %q SET %s = ? WHERE %s = ?`, meta.TableName, metadata.DefaultColumn, metadata.IDColumn)

	err := db.InTransaction(ctx, func(tx *fsql.Tx) error {
		for _, doc := range params.Docs {
			b, err := sjson.Marshal(doc)
			if err != nil {
				return lazyerrors.Error(err)
			}

			id, _ := doc.Get("_id")
			must.NotBeZero(id)

			arg := string(must.NotFail(sjson.MarshalSingleValue(id)))

			r, err := tx.ExecContext(ctx, q, string(b), arg)
			if err != nil {
				return lazyerrors.Error(err)
			}

			ra, err := r.RowsAffected()
			if err != nil {
				return lazyerrors.Error(err)
			}

			res.Updated += int32(ra)
		}

		return nil
	})
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	return &res, nil
}

// DeleteAll implements backends.Collection interface.
func (c *collection) DeleteAll(ctx context.Context, params *backends.DeleteAllParams) (*backends.DeleteAllResult, error) {
	db := c.r.DatabaseGetExisting(ctx, c.dbName)
	if db == nil {
		return &backends.DeleteAllResult{Deleted: 0}, nil
	}

	meta := c.r.CollectionGet(ctx, c.dbName, c.name)
	if meta == nil {
		return &backends.DeleteAllResult{Deleted: 0}, nil
	}

	// TODO https://github.com/FerretDB/FerretDB/issues/3888

	var column string
	var placeholders []string
	var args []any

	if params.RecordIDs == nil {
		placeholders = make([]string, len(params.IDs))
		args = make([]any, len(params.IDs))

		for i, id := range params.IDs {
			placeholders[i] = "?"
			args[i] = string(must.NotFail(sjson.MarshalSingleValue(id)))
		}

		column = metadata.IDColumn
	} else {
		placeholders = make([]string, len(params.RecordIDs))
		args = make([]any, len(params.RecordIDs))

		for i, id := range params.RecordIDs {
			placeholders[i] = "?"
			args[i] = id
		}

		column = metadata.RecordIDColumn
	}

	q := fmt.Sprintf(`DELETE FROM %q WHERE %s IN (%s)`, meta.TableName, column, strings.Join(placeholders, ", "))

	res, err := db.ExecContext(ctx, q, args...)
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	ra, err := res.RowsAffected()
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	return &backends.DeleteAllResult{
		Deleted: int32(ra),
	}, nil
}

// Explain implements backends.Collection interface.
func (c *collection) Explain(ctx context.Context, params *backends.ExplainParams) (*backends.ExplainResult, error) {
	db := c.r.DatabaseGetExisting(ctx, c.dbName)
	if db == nil {
		return &backends.ExplainResult{
			QueryPlanner: must.NotFail(types.NewDocument()),
		}, nil
	}

	meta := c.r.CollectionGet(ctx, c.dbName, c.name)
	if meta == nil {
		return &backends.ExplainResult{
			QueryPlanner: must.NotFail(types.NewDocument()),
		}, nil
	}

	selectClause := prepareSelectClause(meta.TableName, "", meta.Capped(), false)

	var filterPushdown bool
	var whereClause string
	var args []any

	// The same SQL as Query (patched), so `explain` shows what a query runs.
	if exact, ok := exactQuery(c.name, meta, params.Filter, params.Sort, params.ExactSort); ok {
		limit := params.Limit
		if exact.sorted && params.ExactLimit != 0 {
			limit = params.ExactLimit
		}

		where, whereArgs := exact.limitedWhere(limit)
		q := `EXPLAIN QUERY PLAN ` + selectClause + where + exact.orderBy
		args = whereArgs

		if limit != 0 {
			q += ` LIMIT ?`
			args = append(args, limit)
		}

		queryPlan, err := explainPlan(ctx, db, q, args)
		if err != nil {
			return nil, err
		}

		planner := must.NotFail(types.NewDocument("Plan", queryPlan))

		// Patched: whether the keys alone chose the documents read (limitedWhere).
		if exact.keysLimit(limit) {
			planner.Set("KeysLimit", true)
		}

		// A count of this filter would read the terms index's keys alone: its plan too.
		if exact.keys != nil {
			countPlan, err := explainPlan(ctx, db, `EXPLAIN QUERY PLAN `+exact.keys.countSQL(), exact.keys.countArgs)
			if err != nil {
				return nil, err
			}

			planner.Set("CountPlan", countPlan)
		}

		return &backends.ExplainResult{
			QueryPlanner:   planner,
			FilterPushdown: true,
			SortPushdown:   exact.sorted && params.ExactSort.Len() > 0,
			LimitPushdown:  limit != 0,
		}, nil
	}

	// The same conditions as Query (patched), so `explain` shows what a query pushes down.
	if conditions, conditionArgs := supersetConditions(c.name, meta, params.Filter); len(conditions) > 0 {
		filterPushdown = true
		whereClause = ` WHERE ` + strings.Join(conditions, ` AND `)
		args = conditionArgs
	}

	orderByClause := prepareOrderByClause(params.Sort)
	sortPushdown := orderByClause != ""

	q := `EXPLAIN QUERY PLAN ` + selectClause + whereClause + orderByClause

	var limitPushdown bool

	if params.Limit != 0 {
		q += ` LIMIT ?`
		args = append(args, params.Limit)
		limitPushdown = true
	}

	queryPlan, err := explainPlan(ctx, db, q, args)
	if err != nil {
		return nil, err
	}

	return &backends.ExplainResult{
		QueryPlanner:   must.NotFail(types.NewDocument("Plan", queryPlan)),
		FilterPushdown: filterPushdown,
		SortPushdown:   sortPushdown,
		LimitPushdown:  limitPushdown,
	}, nil
}

// explainPlan runs an `EXPLAIN QUERY PLAN` query and returns its rows as text.
func explainPlan(ctx context.Context, db *fsql.DB, q string, args []any) (*types.Array, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	defer rows.Close()

	queryPlan, err := types.NewArray()
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	for rows.Next() {
		var id int32
		var parent int32
		var notused int32
		var detail string

		// SQLite query plan can be interpreted as a tree.
		// Each row of query plan represents a node of this tree,
		// it contains node id, parent id, auxiliary integer field, and a description.
		// See https://www.sqlite.org/eqp.html for further details.
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			return nil, lazyerrors.Error(err)
		}

		queryPlan.Append(fmt.Sprintf("id=%d parent=%d notused=%d detail=%s", id, parent, notused, detail))
	}

	if err := rows.Err(); err != nil {
		return nil, lazyerrors.Error(err)
	}

	return queryPlan, nil
}

// Stats implements backends.Collection interface.
func (c *collection) Stats(ctx context.Context, params *backends.CollectionStatsParams) (*backends.CollectionStatsResult, error) {
	db := c.r.DatabaseGetExisting(ctx, c.dbName)
	if db == nil {
		return nil, backends.NewError(
			backends.ErrorCodeCollectionDoesNotExist,
			lazyerrors.Errorf("no ns %s.%s", c.dbName, c.name),
		)
	}

	coll := c.r.CollectionGet(ctx, c.dbName, c.name)
	if coll == nil {
		return nil, backends.NewError(
			backends.ErrorCodeCollectionDoesNotExist,
			lazyerrors.Errorf("no ns %s.%s", c.dbName, c.name),
		)
	}
	stats, err := collectionsStats(ctx, db, []*metadata.Collection{coll}, params.Refresh)
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	placeholders := make([]string, 0, len(coll.Settings.Indexes))
	args := make([]any, 0, len(coll.Settings.Indexes))
	indexMap := map[string]string{}

	for _, index := range coll.Settings.Indexes {
		placeholders = append(placeholders, "?")
		args = append(args, coll.TableName+"_"+index.Name)
		indexMap[coll.TableName+"_"+index.Name] = index.Name
	}

	q := fmt.Sprintf(`
		SELECT
			name,
			pgsize
		FROM dbstat
		WHERE name IN (%s) AND aggregate = TRUE`,
		strings.Join(placeholders, ", "),
	)

	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	defer rows.Close()

	indexSizes := make([]backends.IndexSize, len(indexMap))
	var i int

	for rows.Next() {
		var name string
		var size int64

		if err = rows.Scan(&name, &size); err != nil {
			return nil, lazyerrors.Error(err)
		}

		indexName, ok := indexMap[name]
		if !ok {
			// new index have been created since fetching metadata
			continue
		}

		indexSizes[i] = backends.IndexSize{
			Name: indexName,
			Size: size,
		}
		i++
	}

	if rows.Err() != nil {
		return nil, lazyerrors.Error(rows.Err())
	}

	return &backends.CollectionStatsResult{
		CountDocuments:  stats.countDocuments,
		SizeTotal:       stats.sizeTables + stats.sizeIndexes,
		SizeIndexes:     stats.sizeIndexes,
		SizeCollection:  stats.sizeTables,
		IndexSizes:      indexSizes,
		SizeFreeStorage: stats.sizeFreeStorage,
	}, nil
}

// Compact implements backends.Collection interface.
func (c *collection) Compact(ctx context.Context, params *backends.CompactParams) (*backends.CompactResult, error) {
	db := c.r.DatabaseGetExisting(ctx, c.dbName)
	if db == nil {
		return nil, backends.NewError(
			backends.ErrorCodeDatabaseDoesNotExist,
			lazyerrors.Errorf("no ns %s.%s", c.dbName, c.name),
		)
	}

	coll := c.r.CollectionGet(ctx, c.dbName, c.name)
	if coll == nil {
		return nil, backends.NewError(
			backends.ErrorCodeCollectionDoesNotExist,
			lazyerrors.Errorf("no ns %s.%s", c.dbName, c.name),
		)
	}

	q := `PRAGMA incremental_vacuum`
	if params != nil && params.Full {
		q = `VACUUM`
	}

	if _, err := db.ExecContext(ctx, q); err != nil {
		return nil, lazyerrors.Error(err)
	}

	return new(backends.CompactResult), nil
}

// ListIndexes implements backends.Collection interface.
func (c *collection) ListIndexes(ctx context.Context, params *backends.ListIndexesParams) (*backends.ListIndexesResult, error) {
	db := c.r.DatabaseGetExisting(ctx, c.dbName)
	if db == nil {
		return nil, backends.NewError(
			backends.ErrorCodeCollectionDoesNotExist,
			lazyerrors.Errorf("no ns %s.%s", c.dbName, c.name),
		)
	}

	coll := c.r.CollectionGet(ctx, c.dbName, c.name)
	if coll == nil {
		return nil, backends.NewError(
			backends.ErrorCodeCollectionDoesNotExist,
			lazyerrors.Errorf("no ns %s.%s", c.dbName, c.name),
		)
	}

	res := backends.ListIndexesResult{
		Indexes: make([]backends.IndexInfo, len(coll.Settings.Indexes)),
	}

	for i, index := range coll.Settings.Indexes {
		res.Indexes[i] = backends.IndexInfo{
			Name:   index.Name,
			Unique: index.Unique,
			Key:    make([]backends.IndexKeyPair, len(index.Key)),
		}

		for j, key := range index.Key {
			res.Indexes[i].Key[j] = backends.IndexKeyPair{
				Field:      key.Field,
				Descending: key.Descending,
			}
		}
	}

	sort.Slice(res.Indexes, func(i, j int) bool {
		return res.Indexes[i].Name < res.Indexes[j].Name
	})

	return &res, nil
}

// CreateIndexes implements backends.Collection interface.
func (c *collection) CreateIndexes(ctx context.Context, params *backends.CreateIndexesParams) (*backends.CreateIndexesResult, error) { //nolint:lll // for readability
	indexes := make([]metadata.IndexInfo, len(params.Indexes))
	for i, index := range params.Indexes {
		indexes[i] = metadata.IndexInfo{
			Name:   index.Name,
			Key:    make([]metadata.IndexKeyPair, len(index.Key)),
			Unique: index.Unique,
		}

		for j, key := range index.Key {
			indexes[i].Key[j] = metadata.IndexKeyPair{
				Field:      key.Field,
				Descending: key.Descending,
			}
		}
	}

	err := c.r.IndexesCreate(ctx, c.dbName, c.name, indexes)
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	return new(backends.CreateIndexesResult), nil
}

// DropIndexes implements backends.Collection interface.
func (c *collection) DropIndexes(ctx context.Context, params *backends.DropIndexesParams) (*backends.DropIndexesResult, error) {
	err := c.r.IndexesDrop(ctx, c.dbName, c.name, params.Indexes)
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	return new(backends.DropIndexesResult), nil
}

// check interfaces
var (
	_ backends.Collection = (*collection)(nil)
)

// supersetConditions returns SQL conditions every document matching filter satisfies: for a
// declared collection, necessaryConditions (exact.go), else pushdownConditions.
func supersetConditions(collection string, meta *metadata.Collection, filter *types.Document) ([]string, []any) {
	if declared := metadata.ScalarFields(collection); declared != nil && filter != nil {
		return necessaryConditions(meta, filter, declared)
	}

	return pushdownConditions(filter)
}

// pushdownConditions returns SQL conditions every document matching filter satisfies (a
// superset: the caller filters the rows again in Go), with their arguments.
func pushdownConditions(filter *types.Document) ([]string, []any) {
	if filter == nil {
		return nil, nil
	}

	var conditions []string
	var args []any

	for _, key := range filter.Keys() {
		value := must.NotFail(filter.Get(key))

		if key == "$and" {
			clauses, ok := value.(*types.Array)
			if !ok {
				continue
			}

			for i := 0; i < clauses.Len(); i++ {
				if clause, ok := must.NotFail(clauses.Get(i)).(*types.Document); ok {
					c, a := pushdownConditions(clause)
					conditions = append(conditions, c...)
					args = append(args, a...)
				}
			}

			continue
		}

		if key == "$or" {
			if c, a := pushdownAlternatives(value); c != "" {
				conditions = append(conditions, c)
				args = append(args, a...)
			}

			continue
		}

		if !pushdownKey.MatchString(key) {
			continue
		}

		if operator, ok := value.(*types.Document); ok {
			if words := allValues(operator); len(words) > 0 {
				// `{k: {$all: [s, ...]}}`: every string is k, or an element of k.
				for _, word := range words {
					conditions = append(conditions, fmt.Sprintf(
						"EXISTS (SELECT 1 FROM json_each(%s, '$.%s') WHERE json_each.value = ?)",
						metadata.DefaultColumn, key,
					))
					args = append(args, word)
				}

				continue
			}
		}

		var values []any

		switch v := value.(type) {
		case string, types.ObjectID:
			values = []any{v}
		case *types.Document:
			values = operandValues(v)
		}

		if len(values) == 0 {
			continue
		}

		column := metadata.IDColumn
		if key != "_id" {
			column = fmt.Sprintf("%s->'$.%s'", metadata.DefaultColumn, key)
		}

		placeholders := make([]string, len(values))
		for i, v := range values {
			placeholders[i] = "?"
			args = append(args, string(must.NotFail(sjson.MarshalSingleValue(v))))
		}

		condition := fmt.Sprintf("%s IN (%s)", column, strings.Join(placeholders, ", "))

		// A string equality also matches an array holding the string: leave arrays to Go.
		// (An `_id` is never an array.)
		if key != "_id" {
			condition = fmt.Sprintf(
				"(%s OR json_type(%s, '$.%s') = 'array')", condition, metadata.DefaultColumn, key,
			)
		}

		conditions = append(conditions, condition)
	}

	return conditions, args
}

// pushdownAlternatives returns one condition for `$or: [branch, ...]` when every branch
// has conditions of its own (a branch without any could match anything), else "".
func pushdownAlternatives(value any) (string, []any) {
	branches, ok := value.(*types.Array)
	if !ok || branches.Len() == 0 {
		return "", nil
	}

	alternatives := make([]string, 0, branches.Len())

	var args []any

	for i := 0; i < branches.Len(); i++ {
		branch, ok := must.NotFail(branches.Get(i)).(*types.Document)
		if !ok {
			return "", nil
		}

		c, a := pushdownConditions(branch)
		if len(c) == 0 {
			return "", nil
		}

		alternatives = append(alternatives, "("+strings.Join(c, " AND ")+")")
		args = append(args, a...)
	}

	return "(" + strings.Join(alternatives, " OR ") + ")", args
}

// pushdownKey matches the top-level field names pushed down: plain names, no paths.
var pushdownKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// operandValues returns the strings (and ObjectIDs) an operator document `{$eq: v}` or
// `{$in: [v, ...]}` accepts, or nil when it is anything else (then nothing is pushed down
// for its field).
func operandValues(operator *types.Document) []any {
	if operator.Len() != 1 {
		return nil
	}

	if v, err := operator.Get("$eq"); err == nil {
		if pushable(v, true) {
			return []any{v}
		}

		return nil
	}

	if list, err := operator.Get("$in"); err == nil {
		return listValues(list, true)
	}

	return nil
}

// allValues returns the strings of `{$all: [s, ...]}`, or nil for anything else.
func allValues(operator *types.Document) []any {
	if operator.Len() != 1 {
		return nil
	}

	if list, err := operator.Get("$all"); err == nil {
		return listValues(list, false)
	}

	return nil
}

// listValues returns the elements of a non-empty array when every one is pushable.
func listValues(list any, objectIDs bool) []any {
	array, ok := list.(*types.Array)
	if !ok || array.Len() == 0 {
		return nil
	}

	values := make([]any, array.Len())

	for i := 0; i < array.Len(); i++ {
		v := must.NotFail(array.Get(i))
		if !pushable(v, objectIDs) {
			return nil
		}

		values[i] = v
	}

	return values
}

// pushable reports whether a value can be compared in SQL: a string, or an ObjectID where
// the comparison is on the stored JSON text.
func pushable(v any, objectIDs bool) bool {
	switch v.(type) {
	case string:
		return true
	case types.ObjectID:
		return objectIDs
	default:
		return false
	}
}
