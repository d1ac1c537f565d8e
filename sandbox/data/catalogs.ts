// Smaller vocabularies of the generator: technologies by technographics category, intent topics,
// investors and funding rounds, and the phrases that fill posts, ratings and 10-K excerpts.

import { TECH_CATEGORIES } from '../../contract/datasets.js';

/** The 21 category arrays of a technographics record (spec 2.6), from the contract. */
export { TECH_CATEGORIES };
export type TechCategory = (typeof TECH_CATEGORIES)[number];

const categoryLabels = new Map<string, string>();

/** "devops_and_development" → "Devops And Development": how the provider labels tech categories. */
export function techCategoryLabel(category: string): string {
  let label = categoryLabels.get(category);
  if (label === undefined) {
    label = category
      .split('_')
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
      .join(' ');
    categoryLabels.set(category, label);
  }
  return label;
}

export const TECHNOLOGIES: Readonly<Record<TechCategory, readonly string[]>> = {
  testing_and_qa: ['Selenium', 'Cypress', 'Playwright', 'BrowserStack', 'Jest'],
  sales: ['Salesforce', 'HubSpot Sales', 'Outreach', 'Gong', 'Pipedrive', 'Apollo'],
  prog_langs_and_frameworks: [
    'React',
    'Node.js',
    'Python',
    'Django',
    'Ruby on Rails',
    'Java',
    'Go',
    'TypeScript',
    'Vue.js',
    '.NET',
  ],
  productivity_and_operations: ['Google Workspace', 'Microsoft 365', 'Notion', 'Airtable', 'Monday.com'],
  product_and_design: ['Figma', 'Sketch', 'Adobe Creative Cloud', 'InVision', 'Miro'],
  platform_and_storage: [
    'Amazon Web Services',
    'Google Cloud',
    'Microsoft Azure',
    'Snowflake',
    'PostgreSQL',
    'MongoDB',
    'Redis',
  ],
  operations_software: ['ServiceTitan', 'Toast', 'Square', 'Procore', 'Shopify POS'],
  operations_management: ['SAP', 'Oracle NetSuite', 'Odoo', 'Fishbowl', 'Epicor'],
  marketing: [
    'Google Analytics',
    'HubSpot Marketing',
    'Mailchimp',
    'Marketo',
    'Hotjar',
    'Google Tag Manager',
    'Meta Pixel',
  ],
  it_security: ['Cloudflare', 'Okta', 'CrowdStrike', '1Password', 'Duo Security'],
  it_management: ['Jamf', 'ServiceNow', 'Intune', 'Kandji'],
  hr: ['Workday', 'BambooHR', 'Greenhouse', 'Lever', 'Rippling', 'Gusto'],
  health_tech: ['Epic', 'athenahealth', 'Cerner', 'Doximity'],
  finance_and_accounting: ['QuickBooks', 'Xero', 'Stripe', 'Bill.com', 'Expensify', 'Brex'],
  ecommerce: ['Shopify', 'WooCommerce', 'Magento', 'BigCommerce', 'Klaviyo'],
  devops_and_development: [
    'GitHub',
    'GitLab',
    'Docker',
    'Kubernetes',
    'Terraform',
    'Datadog',
    'Sentry',
    'Jenkins',
  ],
  customer_management: ['Zendesk', 'Intercom', 'Freshdesk', 'Salesforce Service Cloud', 'Gainsight'],
  computer_networks: ['Cisco Meraki', 'Fortinet', 'Ubiquiti', 'Palo Alto Networks'],
  communications: ['Twilio', 'RingCentral', 'Zoom', 'Aircall'],
  collaboration: ['Slack', 'Microsoft Teams', 'Confluence', 'Jira', 'Asana', 'Trello'],
  bi_and_analytics: ['Tableau', 'Looker', 'Power BI', 'Mixpanel', 'Amplitude', 'Metabase'],
};

/** Technologies every kind of company tends to run. */
export const COMMON_TECH_CATEGORIES: readonly TechCategory[] = [
  'productivity_and_operations',
  'marketing',
  'collaboration',
  'platform_and_storage',
  'it_security',
];

/** Intent topics in the provider's `Category:Topic` form, for `business_intent_topics`. */
export const INTENT_TOPICS: readonly string[] = [
  'Security:Cloud Security',
  'Security:Identity and Access Management',
  'Security:Endpoint Security',
  'HR:Employee Benefits',
  'HR:Recruitment Software',
  'HR:Payroll',
  'Marketing:Marketing Automation',
  'Marketing:Search Engine Optimization',
  'Marketing:Account-Based Marketing',
  'Sales:CRM',
  'Sales:Sales Engagement',
  'Finance:Accounts Payable',
  'Finance:Expense Management',
  'Cloud:Cloud Migration',
  'Cloud:Data Warehousing',
  'Data:Business Intelligence',
  'Data:Data Governance',
  'AI:Generative AI',
  'AI:Machine Learning Platforms',
  'Operations:Supply Chain Software',
  'Operations:Fleet Management',
  'Customer Experience:Help Desk Software',
  'Collaboration:Video Conferencing',
  'Facilities:Office Space',
  'Energy:Solar Installation',
];

export const INVESTORS: readonly string[] = [
  'Northgate Ventures',
  'Blue Summit Capital',
  'Harborlight Partners',
  'Keystone Growth',
  'Meridian Seed Fund',
  'Redwood Crest Ventures',
  'Silverline Capital',
  'Lakeshore Equity',
  'Ironbridge Ventures',
  'Aurora Angels',
  'Granite Peak Partners',
  'Evergreen Growth Fund',
  'Tidewater Capital',
  'Foundry Row Ventures',
  'Compass Rose Capital',
  'Beacon Street Partners',
  'Cobalt Ventures',
  'Westwind Capital',
  'Atlas Bay Investors',
  'Summit Ridge Growth',
];

export const FUNDING_ROUND_TYPES: readonly string[] = [
  'pre_seed',
  'seed',
  'series_a',
  'series_b',
  'series_c',
  'series_d',
  'debt_financing',
  'private_equity',
];

export const ADVISOR_ROLES: readonly string[] = [
  'Board Advisor',
  'Technical Advisor',
  'Go-to-Market Advisor',
  'Finance Advisor',
];

export const POST_OPENERS: readonly string[] = [
  'We are excited to announce',
  'Proud to share',
  'Big news from our team:',
  'This week we celebrated',
  'Thank you to everyone who joined us for',
  'We are hiring!',
  'Looking back on a great quarter:',
  'Meet the team behind',
];

export const POST_SUBJECTS: readonly string[] = [
  'our new office opening',
  'the launch of our latest release',
  'a new partnership with a regional leader',
  'our annual customer summit',
  'a milestone of 1,000 customers',
  'our team volunteering day',
  'an industry award for innovation',
  'open roles across engineering and sales',
  'our sustainability report',
  'a webinar on practical AI adoption',
];

export const RISK_PHRASES: Readonly<Record<string, readonly string[]>> = {
  technological_disruption: [
    'Rapid adoption of AI-driven tools by competitors could erode demand for our offerings.',
    'Shifts to cloud-based delivery models may require significant reinvestment.',
    'New entrants using lower-cost technologies could disrupt our pricing.',
  ],
  company_data_security_breach: [
    'A breach of our systems could expose customer data and harm our reputation.',
    'Ransomware attacks on our suppliers could interrupt operations.',
    'Failures of third-party hosting providers could compromise data integrity.',
  ],
  company_market_saturation: [
    'Growth in our core market is slowing as penetration increases.',
    'Demand in mature regions may not offset saturation in our primary segment.',
  ],
  company_data_security_privacy: [
    'Evolving privacy regulations may increase compliance costs.',
    'Cross-border data transfer restrictions could limit our services.',
  ],
  company_competition: [
    'We face intense competition from larger companies with greater resources.',
    'Price competition could reduce our margins.',
    'Competitors may bundle products in ways we cannot match.',
  ],
  company_customer_adoption: [
    'Customers may be slow to adopt new product lines.',
    'Longer sales cycles for enterprise customers could delay revenue.',
  ],
};

export const STRATEGY_PHRASES: Readonly<Record<string, readonly string[]>> = {
  target_market: [
    'Mid-market companies in North America',
    'Enterprise customers in regulated industries',
    'Small businesses seeking affordable tools',
    'Public sector agencies',
  ],
  company_value_proposition: [
    'Lower total cost of ownership',
    'Faster time to value',
    'Integrated end-to-end offering',
    'Reliable service backed by local support',
  ],
  company_focus: [
    'Expanding recurring revenue',
    'Improving operating margins',
    'Investing in product innovation',
    'Growing international sales',
  ],
  company_partnerships: [
    'Strategic alliances with cloud providers',
    'Channel partnerships with regional resellers',
    'Joint development agreements with suppliers',
  ],
  company_product_development: [
    'Launch of next-generation platform',
    'Expansion of analytics capabilities',
    'Modular product lines for new segments',
  ],
  company_marketing_sales: [
    'Account-based marketing for enterprise accounts',
    'Expansion of inside sales teams',
    'Digital-first demand generation',
  ],
};

export const COMPETITION_PHRASES: Readonly<Record<string, readonly string[]>> = {
  competitive_differentiation: [
    'Proprietary technology and patents',
    'Breadth of product portfolio',
    'Long-standing customer relationships',
    'Scale of distribution network',
    'Quality and reliability of service',
  ],
};

export const WEBSITE_CHANGE_KINDS: readonly { description: string; implication: string }[] = [
  {
    description: 'Added a new careers page listing open roles',
    implication: 'The company is actively hiring.',
  },
  {
    description: 'Launched a pricing page with three tiers',
    implication: 'The company is formalising self-serve sales.',
  },
  { description: 'Published a new product page', implication: 'A new offering is being brought to market.' },
  {
    description: 'Updated the leadership team page',
    implication: 'Leadership changes may shift priorities.',
  },
  {
    description: 'Added customer case studies',
    implication: 'The company is investing in social proof for sales.',
  },
  {
    description: 'Removed a product from the navigation',
    implication: 'A product line may have been discontinued.',
  },
  {
    description: 'Added a security and compliance page',
    implication: 'The company is targeting enterprise buyers.',
  },
  { description: 'Announced a new office location', implication: 'The company is expanding geographically.' },
];
