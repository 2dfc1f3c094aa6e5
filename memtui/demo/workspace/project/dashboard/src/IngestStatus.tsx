import { useIngestQuery } from "./useIngestQuery";

type Batch = { id: number; source: string; rows: number; writtenAt: string };

export function IngestStatus() {
  const { data, error } = useIngestQuery<Batch[]>("/batches?limit=20");
  if (error) return <p role="alert">Could not load batches: {error.message}</p>;
  if (!data) return <p>Loading…</p>;
  return (
    <table>
      <tbody>
        {data.map((b) => (
          <tr key={b.id}>
            <td>{b.source}</td>
            <td>{b.rows}</td>
            <td>{new Date(b.writtenAt).toLocaleString()}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
