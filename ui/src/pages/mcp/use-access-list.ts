/**
 * What the Bindings and Policies tabs share: the list (the API's first 500), its delete (which
 * refreshes every MCP view, since a server's detail shows both), and the "New …" form toggle that
 * gives the focus back to its button when the form closes.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useSession } from '../../auth/session.tsx';
import { useReturnFocus } from '../../components/use-return-focus.ts';
import type { ListAnswer } from './mcp-types.ts';

export function useAccessList<T>(options: { name: string; path: string; idOf: (item: T) => string }) {
  const { api } = useSession();
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState(false);
  const newButton = useReturnFocus(creating);
  const query = useQuery({
    queryKey: ['mcp', options.name],
    queryFn: () => api.get<ListAnswer<T>>(options.path, { limit: 500 }),
  });
  const remove = useMutation({
    mutationFn: (item: T) => api.delete(`${options.path}/${encodeURIComponent(options.idOf(item))}`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['mcp'] }),
  });
  return { query, remove, creating, setCreating, newButton };
}
