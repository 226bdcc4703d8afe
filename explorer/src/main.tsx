import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { ApiError } from './api.ts';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    // The store changes under the explorer only when an agent writes; a minute is fresh.
    queries: {
      staleTime: 60_000,
      refetchOnWindowFocus: false,
      // Twice more when the gateway could not answer; never when it answered no (a 401, a
      // refused argument): the same question gets the same answer, so say so at once.
      retry: (failures, error) =>
        failures < 2 && !(error instanceof ApiError && error.status >= 200 && error.status < 500),
    },
  },
});

createRoot(document.getElementById('explorer')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
