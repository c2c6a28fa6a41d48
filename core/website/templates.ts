// The copy of a generated website without a model: built-in templates
// filled with the brief's own words (its business, audience), and nothing
// invented beyond them — services and posts are placeholders saying what
// to write there. The job's output says the copy is template-made
// (copy_source: template); the tone is not applied, only a model can.
import type { WebsiteCopy, WebsiteJob } from './brief.ts';

type PageCopy = WebsiteCopy['pages'][number];

const titleOf = (key: string) => key.charAt(0).toUpperCase() + key.slice(1).replace(/-/g, ' ');

function pageTemplate(key: string, brief: WebsiteJob): PageCopy {
  const { business } = brief;
  const forWhom = brief.audience ? ` for ${brief.audience}` : '';
  switch (key) {
    case 'home':
      return {
        key,
        title: 'Home',
        hero: {
          headline: business.slice(0, 200),
          subheadline: brief.audience ? `Made for ${brief.audience}.` : `Welcome to ${business}.`,
          call_to_action: 'Get in touch',
        },
        sections: [{ heading: 'What we do', body: `${business}${forWhom}.` }],
      };
    case 'about':
      return {
        key,
        title: 'About us',
        sections: [
          { heading: 'About us', body: `${business}. Tell your visitors here who you are and how you started.` },
        ],
      };
    case 'services':
      return {
        key,
        title: 'Services',
        sections: [{ heading: 'Our services', body: `What ${business} offers${forWhom}.` }],
        services: [1, 2, 3].map((n) => ({
          name: `Service ${n}`,
          description: `Describe a service of ${business} here: what it is, and who it helps.`,
        })),
      };
    case 'contact':
      return {
        key,
        title: 'Contact',
        sections: [
          {
            heading: 'Contact us',
            body: `Questions for ${business}? Write to us; add your address, phone and opening hours here.`,
          },
        ],
      };
    case 'blog':
      return {
        key,
        title: 'Blog',
        sections: [{ heading: 'News', body: `News and stories from ${business}.` }],
      };
    default:
      return {
        key,
        title: titleOf(key),
        sections: [{ heading: titleOf(key), body: `${titleOf(key)} at ${business}: write this page’s text here.` }],
      };
  }
}

export function templateCopy(brief: WebsiteJob): WebsiteCopy {
  return {
    pages: brief.pages.map((key) => pageTemplate(key, brief)),
    posts: Array.from({ length: brief.posts }, (_, index) => ({
      title: `Post ${index + 1} from ${brief.business}`.slice(0, 200),
      excerpt: 'A draft to write: replace this with what the post is about.',
      body: `A draft post for ${brief.business}${brief.audience ? `, written for ${brief.audience}` : ''}. Write it here.`,
    })),
  };
}
