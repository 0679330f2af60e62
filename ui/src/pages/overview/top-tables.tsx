/** The overview's top models, keys and teams by spend (five each, as the API ranks them). */
import type { OverviewAnswer, TopKey, TopModel, TopTeam } from '../../api/console-types.ts';
import { DataTable } from '../../components/data-table.tsx';
import { formatCount, formatUsd } from '../../components/format.ts';

export function TopTables(props: { answer: OverviewAnswer }) {
  const { top_models: models, top_keys: keys, top_teams: teams } = props.answer;
  return (
    <div className="top-grid">
      <div>
        <DataTable<TopModel>
          caption="Top models"
          rows={models}
          rowKey={(row) => row.model}
          columns={[
            { header: 'Model', cell: (row) => row.model },
            { header: 'Requests', numeric: true, cell: (row) => formatCount(row.requests) },
            { header: 'Tokens', numeric: true, cell: (row) => formatCount(row.total_tokens) },
            { header: 'Spend', numeric: true, cell: (row) => formatUsd(row.spend) },
          ]}
        />
      </div>
      <div>
        <DataTable<TopKey>
          caption="Top keys"
          rows={keys}
          rowKey={(row) => row.key_id}
          columns={[
            { header: 'Key', cell: (row) => <NameAndId name={row.key_name} id={row.key_id} /> },
            { header: 'Requests', numeric: true, cell: (row) => formatCount(row.requests) },
            { header: 'Spend', numeric: true, cell: (row) => formatUsd(row.spend) },
          ]}
        />
      </div>
      <div>
        <DataTable<TopTeam>
          caption="Top teams"
          rows={teams}
          rowKey={(row) => row.team_id}
          columns={[
            { header: 'Team', cell: (row) => <NameAndId name={row.team_alias} id={row.team_id} /> },
            { header: 'Requests', numeric: true, cell: (row) => formatCount(row.requests) },
            { header: 'Spend', numeric: true, cell: (row) => formatUsd(row.spend) },
          ]}
        />
        {teams.length === 0 && (
          <p className="table-note">
            No team's keys sent requests in this window: add keys to teams to see them here.
          </p>
        )}
      </div>
    </div>
  );
}

function NameAndId(props: { name: string | null; id: string }) {
  if (props.name === null || props.name === '') return <code>{props.id}</code>;
  return (
    <>
      {props.name} <code className="muted-id">{props.id}</code>
    </>
  );
}
