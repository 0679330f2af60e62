/** A page's sections as links (deep-linkable, the back button works), the current one marked active. */
import { NavLink } from 'react-router';

export interface Tab {
  to: string;
  label: string;
  /** Active only on exactly this path (a section whose path prefixes the others'). */
  end?: boolean;
}

export function TabNav(props: { label: string; tabs: readonly Tab[] }) {
  return (
    <nav className="tabs" aria-label={props.label}>
      {props.tabs.map((tab) => (
        <NavLink key={tab.to} to={tab.to} end={tab.end ?? false}>
          {tab.label}
        </NavLink>
      ))}
    </nav>
  );
}
